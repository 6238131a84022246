// The embedding step, a lookup: each token id selects one row of a table W_E. A model's stored
// table, with its positional table added (x = embed[ids] + pos[t]), forward and backward (a
// scatter-add into the rows the ids selected); and the walkthrough's seeded table, too large to
// store, whose rows are drawn on demand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "attention/ops/half.hpp"
#include "attention/tensor.hpp"

namespace attn {

namespace reference {

// out [batch·n, d] = embed[ids[b·n + t]] + pos[t];  embed [vocab, d], pos [n, d] or nullptr.
// ids must be < vocab (the model checks them).
template <class T>
void input_embedding_forward(const std::int32_t* ids, const T* embed, const T* pos, T* out,
                             std::size_t batch, std::size_t n, std::size_t d) {
  for (std::size_t r = 0; r < batch * n; ++r) {
    const T* e = embed + std::size_t(ids[r]) * d;
    const T* p = pos ? pos + (r % n) * d : nullptr;
    for (std::size_t c = 0; c < d; ++c) out[r * d + c] = p ? e[c] + p[c] : e[c];
  }
}

// Accumulates dembed [vocab, d] rows ids[r] += dout[r], and dpos [n, d] (a learned table; or
// nullptr) row t += Σ_b dout[b·n + t].  dout [batch·n, d].
template <class T>
void input_embedding_backward(const T* dout, const std::int32_t* ids, T* dembed, T* dpos,
                              std::size_t batch, std::size_t n, std::size_t d) {
  for (std::size_t r = 0; r < batch * n; ++r) {
    T* de = dembed + std::size_t(ids[r]) * d;
    for (std::size_t c = 0; c < d; ++c) de[c] += dout[r * d + c];
    if (dpos) {
      for (std::size_t c = 0; c < d; ++c) dpos[(r % n) * d + c] += dout[r * d + c];
    }
  }
}

}  // namespace reference

// The same contracts in float with SIMD row loops.
void input_embedding_forward(const std::int32_t* ids, const float* embed, const float* pos,
                             float* out, std::size_t batch, std::size_t n, std::size_t d);
// The table as a model stores it (float, or 2-byte rows widened as they are looked up).
void input_embedding_forward(const std::int32_t* ids, const StoredWeights& embed, const float* pos,
                             float* out, std::size_t batch, std::size_t n, std::size_t d);
void input_embedding_backward(const float* dout, const std::int32_t* ids, float* dembed,
                              float* dpos, std::size_t batch, std::size_t n, std::size_t d);

// ---- the walkthrough's seeded table -------------------------------------------------------------

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
