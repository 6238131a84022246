// Token embeddings as a lookup: each token id selects one row of a seeded table W_E.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "attention/tensor.hpp"

namespace attn {

inline constexpr std::uint32_t kVocabularySize = 65536;  // rows of the (virtual) table

// out [n, d_model]: row t = W_E[ids[t]], where W_E[id] ~ N(0, 1) is drawn from a generator
// seeded by (seed, id) — a table too large to store, but the same row for the same id always.
// Throws attn::Error for an id >= kVocabularySize.
void embed_tokens(std::span<const std::uint32_t> ids, std::uint32_t seed, MatView out);

// The same lookup, keeping the rows drawn so far: a reader typing re-embeds the same tokens on
// every keystroke, and drawing one row costs d_model Gaussians (~28 µs at d_model 256 in wasm,
// whose log needs a software fma). Holds at most max_cached_values floats, then starts over.
class EmbeddingTable {
 public:
  EmbeddingTable(std::uint32_t seed, std::size_t d_model,
                 std::size_t max_cached_values = std::size_t{1} << 20);

  // out [n, d_model]: equal to embed_tokens(ids, seed, out), bit for bit.
  void lookup(std::span<const std::uint32_t> ids, MatView out);

  std::size_t cached_rows() const { return row_of_id_.size(); }

 private:
  std::uint32_t seed_;
  std::size_t d_model_;
  std::size_t max_cached_rows_;
  std::unordered_map<std::uint32_t, std::size_t> row_of_id_;  // id -> row index in rows_
  std::vector<float> rows_;                                   // [cached_rows, d_model]
};

}  // namespace attn
