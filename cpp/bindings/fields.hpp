// The three visitors of a struct's field list (attention/fields.hpp): read a JS options object into
// the struct, write the struct to a JS object, and describe its fields for lens.catalog. The JS API
// has already checked each value's type against the description and filled the defaults; the
// core's own checks (the parsers of names, validate) judge the values.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attention/name_table.hpp"
#include "bindings/common.hpp"

namespace attn::bindings {

// Reads object[name] into each field (a field the object lacks keeps the struct's value).
class FieldReader {
 public:
  explicit FieldReader(val object) : object_(std::move(object)) {}

  template <class T>
  void count(const char* name, T& value, std::int64_t, std::int64_t) {
    if (const val v = get(name); !v.isUndefined()) value = T(v.as<double>());
  }
  void number(const char* name, double& value) {
    if (const val v = get(name); !v.isUndefined()) value = v.as<double>();
  }
  void boolean(const char* name, bool& value) {
    if (const val v = get(name); !v.isUndefined()) value = v.as<bool>();
  }
  template <class Kind, class Parse>
  void choice(const char* name, Kind& value, std::span<const NamedKind<Kind>>, Parse parse) {
    if (const val v = get(name); !v.isUndefined()) value = parse(v.as<std::string>());
  }
  void optional_boolean(const char* name, std::optional<bool>& value) {
    const val v = get(name);
    if (v.isNull()) value.reset();
    if (!v.isUndefined() && !v.isNull()) value = v.as<bool>();
  }
  void numbers(const char* name, std::vector<double>& value, const char*) {
    const val v = get(name);
    if (v.isNull()) value.clear();
    if (!v.isUndefined() && !v.isNull()) value = vector_or_empty<double>(v);
  }
  template <class Struct>
  void object(const char* name, Struct& value) {
    if (const val v = get(name); !v.isUndefined() && !v.isNull()) {
      FieldReader inner(v);
      visit_fields(value, inner);
    }
  }

 private:
  val get(const char* name) const { return object_[name]; }
  val object_;
};

// Writes each field to a JS object (out).
class FieldWriter {
 public:
  val out = val::object();

  template <class T>
  void count(const char* name, const T& value, std::int64_t, std::int64_t) {
    out.set(name, double(value));
  }
  void number(const char* name, double value) { out.set(name, value); }
  void boolean(const char* name, bool value) { out.set(name, value); }
  template <class Kind, class Parse>
  void choice(const char* name, Kind value, std::span<const NamedKind<Kind>> table, Parse) {
    out.set(name, std::string(name_of(table, value)));
  }
  void optional_boolean(const char* name, const std::optional<bool>& value) {
    out.set(name, value ? val(*value) : val::null());
  }
  void numbers(const char* name, const std::vector<double>& value, const char*) {
    if (value.empty()) {
      out.set(name, val::null());
      return;
    }
    val list = val::array();
    for (const double x : value) list.call<void>("push", x);
    out.set(name, list);
  }
  template <class Struct>
  void object(const char* name, Struct& value) {
    FieldWriter inner;
    visit_fields(value, inner);
    out.set(name, inner.out);
  }
};

// Describes each field: { name, kind: 'count' | 'number' | 'boolean' | 'choice' |
// 'optionalBoolean' | 'numbers' | 'object', min, max (count), names (choice), note (numbers),
// fields (object) }.
class FieldDescriber {
 public:
  val fields = val::array();

  template <class T>
  void count(const char* name, const T&, std::int64_t min, std::int64_t max) {
    val f = field(name, "count");
    f.set("min", double(min));
    f.set("max", double(max));
  }
  void number(const char* name, double) { field(name, "number"); }
  void boolean(const char* name, bool) { field(name, "boolean"); }
  template <class Kind, class Parse>
  void choice(const char* name, Kind, std::span<const NamedKind<Kind>> table, Parse) {
    val names = val::array();
    for (const auto& entry : table) names.call<void>("push", std::string(entry.name));
    field(name, "choice").set("names", names);
  }
  void optional_boolean(const char* name, const std::optional<bool>&) {
    field(name, "optionalBoolean");
  }
  void numbers(const char* name, const std::vector<double>&, const char* note) {
    field(name, "numbers").set("note", std::string(note));
  }
  template <class Struct>
  void object(const char* name, Struct& value) {
    FieldDescriber inner;
    visit_fields(value, inner);
    field(name, "object").set("fields", inner.fields);
  }

 private:
  val field(const char* name, const char* kind) {
    val f = val::object();
    f.set("name", std::string(name));
    f.set("kind", std::string(kind));
    fields.call<void>("push", f);
    return f;
  }
};

// A struct from a JS object (its defaults where the object has no field).
template <class Struct>
Struct read_fields(const val& object, Struct out = {}) {
  FieldReader reader(object);
  visit_fields(out, reader);
  return out;
}
template <class Struct>
val write_fields(Struct value) {
  FieldWriter writer;
  visit_fields(value, writer);
  return writer.out;
}
template <class Struct>
val describe_fields() {
  Struct defaults{};
  FieldDescriber describer;
  visit_fields(defaults, describer);
  return describer.fields;
}

}  // namespace attn::bindings
