// Seeded embedding-table lookup (see embedding.hpp).
#include "attention/ops/embedding.hpp"

#include <string>

#include "attention/error.hpp"
#include "attention/rng.hpp"

namespace attn {

namespace {
// A well-mixed 32-bit seed for one table row (murmur3's finalizer over seed and id).
std::uint32_t row_seed(std::uint32_t seed, std::uint32_t id) {
  std::uint32_t h = seed ^ (id * 0x9E3779B1u) ^ 0xE3B0C442u;
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}
}  // namespace

void embed_tokens(std::span<const std::uint32_t> ids, std::uint32_t seed, MatView out) {
  if (out.rows != ids.size()) {
    throw Error("embedding output has " + std::to_string(out.rows) +
                " rows, expected one per token: " + std::to_string(ids.size()));
  }
  for (std::size_t t = 0; t < ids.size(); ++t) {
    if (ids[t] >= kVocabularySize) {
      throw Error("token id " + std::to_string(ids[t]) + " at position " + std::to_string(t) +
                  " is outside the vocabulary [0, " + std::to_string(kVocabularySize) + ")");
    }
    NumpyRandomState rng(row_seed(seed, ids[t]));
    rng.fill_randn(std::span<float>(out.row(t), out.cols));
  }
}

}  // namespace attn
