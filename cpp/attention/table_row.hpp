// The lookup of a row in a constant table of structs, by one of its members (a file format's
// dtype table by dtype, name or storage type: io/safetensors.cpp, io/pickle.cpp).
#pragma once

#include <cstddef>

namespace attn {

// The first row of `table` whose member `key` equals `value`, or nullptr.
template <class Row, std::size_t N, class Key, class Value>
constexpr const Row* find_row(const Row (&table)[N], Key Row::*key, const Value& value) {
  for (const Row& row : table) {
    if (row.*key == value) return &row;
  }
  return nullptr;
}

}  // namespace attn
