// The logit lens (logit_lens.hpp).
#include "attention/model/logit_lens.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "attention/error.hpp"
#include "attention/model/next_tokens.hpp"

namespace attn {

namespace {

// Positions read through the final norm and the unembedding at a time: bounds the logits kept to
// kLensPositions × vocab, whatever n is.
constexpr std::size_t kLensPositions = 64;

void check_options(const LogitLensOptions& options, std::size_t vocab) {
  const std::size_t most = std::min(vocab, kMaxLensTopK);
  if (options.top_k < 1 || options.top_k > most) {
    throw Error("topK must be between 1 and " + std::to_string(most) +
                (most == vocab ? " (the vocabulary's size)" : "") + ", got " +
                std::to_string(options.top_k));
  }
  if (options.token && (*options.token < 0 || std::size_t(*options.token) >= vocab)) {
    throw Error("token " + std::to_string(*options.token) +
                " is not in the vocabulary: it has ids 0 to " + std::to_string(vocab - 1));
  }
}

}  // namespace

LogitLens logit_lens(Model& model, std::span<const std::int32_t> ids,
                     const LogitLensOptions& options) {
  const ModelConfig& config = model.config();
  if (ids.empty()) throw Error("the logit lens needs at least one token id, got none");
  check_options(options, config.vocab);
  const std::size_t n = ids.size(), d = config.d_model, V = config.vocab, k = options.top_k;
  model.forward(ids, 1, n, ForwardRun{std::nullopt, nullptr, false});

  LogitLens lens;
  lens.rows = config.layers + 1;
  lens.n = n;
  lens.top_k = k;
  lens.token = options.token;
  lens.ids.resize(lens.rows * n * k);
  lens.probs.resize(lens.rows * n * k);
  if (options.token) {
    lens.token_probs.resize(lens.rows * n);
    lens.token_ranks.resize(lens.rows * n);
  }
  AlignedVector<float> logits;  // [positions, vocab]
  for (std::size_t row = 0; row < lens.rows; ++row) {
    const std::span<const float> residual = model.residual(row);  // [n, d]
    for (std::size_t first = 0; first < n; first += kLensPositions) {
      const std::size_t count = std::min(kLensPositions, n - first);
      model.logits_of_residual(residual.data() + first * d, count, logits);
      for (std::size_t i = 0; i < count; ++i) {
        const std::span<const float> row_logits(logits.data() + i * V, V);
        const std::size_t at = row * n + first + i;
        const auto top = top_next_tokens(row_logits, k);
        for (std::size_t j = 0; j < k; ++j) {
          lens.ids[at * k + j] = top[j].id;
          lens.probs[at * k + j] = float(top[j].probability);
        }
        if (!options.token) continue;
        // The token's probability as top_next_tokens computes one (the same sum, in id order)
        // and its rank in the same order (logit descending, ties by the lower id).
        const std::int32_t token = *options.token;
        const float mine = row_logits[std::size_t(token)];
        const double max = *std::max_element(row_logits.begin(), row_logits.end());
        double sum = 0.0;
        std::size_t rank = 0;
        for (std::size_t v = 0; v < V; ++v) {
          sum += std::exp(double(row_logits[v]) - max);
          if (row_logits[v] > mine || (row_logits[v] == mine && v < std::size_t(token))) ++rank;
        }
        lens.token_probs[at] = float(std::exp(double(mine) - max) / sum);
        lens.token_ranks[at] = std::int32_t(rank);
      }
    }
  }
  return lens;
}

}  // namespace attn
