// Name <-> enum tables for the options given by name (positional, mask, tokenizer): the parser
// and the list of accepted names are the same data.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attention/error.hpp"

namespace attn {

template <class Kind>
struct NamedKind {
  const char* name;
  Kind kind;
};

// "'a', 'b' or 'c'"
inline std::string quoted_alternatives(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? " or " : ", ";
    text += "'" + names[i] + "'";
  }
  return text;
}

template <class Kind>
std::vector<std::string> table_names(std::span<const NamedKind<Kind>> table) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.emplace_back(entry.name);
  return names;
}

// The kind named `name`; throws "unknown <what> '<name>': expected 'a', 'b' or 'c'".
template <class Kind>
Kind parse_named(std::span<const NamedKind<Kind>> table, std::string_view name, const char* what) {
  for (const auto& entry : table) {
    if (name == entry.name) return entry.kind;
  }
  throw Error("unknown " + std::string(what) + " '" + std::string(name) + "': expected " +
              quoted_alternatives(table_names(table)));
}

template <class Kind>
const char* name_of(std::span<const NamedKind<Kind>> table, Kind kind) {
  for (const auto& entry : table) {
    if (entry.kind == kind) return entry.name;
  }
  return table.front().name;
}

}  // namespace attn
