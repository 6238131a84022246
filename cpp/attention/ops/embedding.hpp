// Token embeddings as a lookup: each token id selects one row of a seeded table W_E.
#pragma once

#include <cstdint>
#include <span>

#include "attention/tensor.hpp"

namespace attn {

inline constexpr std::uint32_t kVocabularySize = 65536;  // rows of the (virtual) table

// out [n, d_model]: row t = W_E[ids[t]], where W_E[id] ~ N(0, 1) is drawn from a generator
// seeded by (seed, id) — a table too large to store, but the same row for the same id always.
// Throws attn::Error for an id >= kVocabularySize.
void embed_tokens(std::span<const std::uint32_t> ids, std::uint32_t seed, MatView out);

}  // namespace attn
