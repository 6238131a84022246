// A config struct's fields under their JS API names, listed once: each struct has one
// visit_fields(S&, visitor) beside it naming its fields in order with their kind. The bindings read
// a JS options object into the struct with it, write the struct back to JS with it, and export each
// field's name, kind and bounds to lens.catalog (the defaults are the struct's own values), so the
// JS API checks keys and types and fills defaults from that one list (name_table.hpp does the same
// for the names of a kind). A visitor has one method per kind of field:
//   count(name, value&, min, max)               an integer in [min, max] (any integer type)
//   number(name, double&)
//   boolean(name, bool&)
//   choice(name, Kind&, table, parse)           a kind by name: its NamedKind table and its parser
//                                               (whose message names the accepted names)
//   optional_boolean(name, std::optional<bool>&)  null or absent: unset
//   numbers(name, std::vector<double>&, note)   an array of numbers, or null (empty)
//   object(name, Struct&)                       a nested struct with its own visit_fields
#pragma once

#include <cstdint>

namespace attn {

// The JS bounds of a count field (the core checks the values themselves).
inline constexpr std::int64_t kFieldSizeMax = 0xffffffff;            // size_t and uint32 fields
inline constexpr std::int64_t kFieldDimMax = std::int64_t{1} << 30;  // a layer's sizes

}  // namespace attn
