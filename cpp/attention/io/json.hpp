// A strict JSON reader (RFC 8259, nesting-limited) for the files the core reads: the .safetensors
// header, config.json. Values keep document order and duplicate keys; errors name the byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace attn::json {

inline constexpr int kMaxDepth = 64;
inline constexpr std::uint64_t kMaxExactInteger = std::uint64_t{1} << 53;  // JSON numbers: doubles

struct Number {
  std::string text;      // as written, for messages
  bool integral = true;  // no fraction, no exponent
  bool negative = false;
  bool exact = true;  // integral and magnitude <= 2^53
  std::uint64_t magnitude = 0;
  double value() const;  // the number as a double (strtod of text)
};

struct Value;
struct Member;
using Array = std::vector<Value>;
using Object = std::vector<Member>;  // in document order, duplicates kept

struct Value {
  std::variant<std::nullptr_t, bool, Number, std::string, Array, Object> data;

  const Object* object() const { return std::get_if<Object>(&data); }
  const Array* array() const { return std::get_if<Array>(&data); }
  const std::string* string() const { return std::get_if<std::string>(&data); }
  const Number* number() const { return std::get_if<Number>(&data); }
  const bool* boolean() const { return std::get_if<bool>(&data); }
  bool is_null() const { return std::holds_alternative<std::nullptr_t>(data); }
};

struct Member {
  std::string key;
  Value value;
};

// "null", "a boolean", "a number", "a string", "an array", "an object".
const char* kind_name(const Value& value);

// How parse errors read: "<prefix> at byte N: <what>", where <what> names the document
// (e.g. "unexpected end of header, expected a value" with document "header").
struct Source {
  std::string_view prefix = "invalid JSON";
  std::string_view document = "document";
};

// Parses text, which must be valid UTF-8 (callers check it, with their own message). Trailing
// white space is accepted. Throws attn::Error as Source describes.
Value parse(std::string_view text, const Source& source = {});

// The first member named key, or nullptr.
const Value* find(const Object& object, std::string_view key);

}  // namespace attn::json
