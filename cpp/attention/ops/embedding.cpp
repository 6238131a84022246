// The embedding lookups (see embedding.hpp).
#include "attention/ops/embedding.hpp"

#include <algorithm>
#include <string>

#include "attention/error.hpp"
#include "attention/ops/vec.hpp"
#include "attention/rng.hpp"

namespace attn {

void input_embedding_forward(const std::int32_t* ids, const float* embed, const float* pos,
                             float* out, std::size_t batch, std::size_t n, std::size_t d) {
  input_embedding_forward(ids, StoredWeights(embed), pos, out, batch, n, d);
}

void input_embedding_forward(const std::int32_t* ids, const StoredWeights& embed, const float* pos,
                             float* out, std::size_t batch, std::size_t n, std::size_t d) {
  for (std::size_t r = 0; r < batch * n; ++r) {
    embed.rows(std::size_t(ids[r]), 1, d, out + r * d);
    if (pos) vec::add(pos + (r % n) * d, out + r * d, d);
  }
}

void input_embedding_backward(const float* dout, const std::int32_t* ids, float* dembed,
                              float* dpos, std::size_t batch, std::size_t n, std::size_t d) {
  for (std::size_t r = 0; r < batch * n; ++r) {
    vec::add(dout + r * d, dembed + std::size_t(ids[r]) * d, d);
    if (dpos) vec::add(dout + r * d, dpos + (r % n) * d, d);
  }
}

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

void check_lookup(std::span<const std::uint32_t> ids, const MatView& out) {
  if (out.rows != ids.size()) {
    throw Error("embedding output has " + std::to_string(out.rows) +
                " rows, expected one per token: " + std::to_string(ids.size()));
  }
  for (std::size_t t = 0; t < ids.size(); ++t) {
    if (ids[t] >= kVocabularySize) {
      throw Error("token id " + std::to_string(ids[t]) + " at position " + std::to_string(t) +
                  " is outside the vocabulary [0, " + std::to_string(kVocabularySize) + ")");
    }
  }
}

// row [d_model] = W_E[id]
void draw_row(std::uint32_t seed, std::uint32_t id, std::span<float> row) {
  NumpyRandomState rng(row_seed(seed, id));
  rng.fill_randn(row);
}
}  // namespace

void embed_tokens(std::span<const std::uint32_t> ids, std::uint32_t seed, MatView out) {
  check_lookup(ids, out);
  for (std::size_t t = 0; t < ids.size(); ++t) {
    draw_row(seed, ids[t], std::span<float>(out.row(t), out.cols));
  }
}

EmbeddingTable::EmbeddingTable(std::uint32_t seed, std::size_t d_model,
                               std::size_t max_cached_values)
    : seed_(seed),
      d_model_(d_model),
      max_cached_rows_(
          std::max<std::size_t>(1, max_cached_values / std::max<std::size_t>(1, d_model))) {}

void EmbeddingTable::lookup(std::span<const std::uint32_t> ids, MatView out) {
  check_lookup(ids, out);
  if (out.cols != d_model_) {
    throw Error("embedding output has " + std::to_string(out.cols) +
                " columns, expected d_model = " + std::to_string(d_model_));
  }
  for (std::size_t t = 0; t < ids.size(); ++t) {
    std::span<float> row(out.row(t), d_model_);
    if (const auto found = row_of_id_.find(ids[t]); found != row_of_id_.end()) {
      std::copy_n(rows_.begin() + static_cast<std::ptrdiff_t>(found->second * d_model_), d_model_,
                  row.begin());
      continue;
    }
    draw_row(seed_, ids[t], row);
    if (row_of_id_.size() == max_cached_rows_) {  // full: start over rather than grow
      row_of_id_.clear();
      rows_.clear();
    }
    row_of_id_.emplace(ids[t], row_of_id_.size());
    rows_.insert(rows_.end(), row.begin(), row.end());
  }
}

}  // namespace attn
