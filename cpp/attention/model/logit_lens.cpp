// The logit lens (logit_lens.hpp).
#include "attention/model/logit_lens.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "attention/error.hpp"
#include "attention/parallel.hpp"

namespace attn {

namespace {

// Residual rows read through the final norm and the unembedding at a time: bounds the logits kept
// to kLensPositions × vocab, whatever n and the layers are.
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

// The k most likely ids of logits [vocab] into `top`, most likely first, ties by the lower id:
// top_next_tokens' order, found in one pass with a heap of k (no vocabulary-sized buffer).
void most_likely(std::span<const float> logits, std::size_t k, std::vector<std::int32_t>& top) {
  const auto better = [&](std::int32_t a, std::int32_t b) {
    const float la = logits[std::size_t(a)], lb = logits[std::size_t(b)];
    return la > lb || (la == lb && a < b);
  };
  top.clear();  // a heap whose front is the least likely id kept
  for (std::size_t v = 0; v < logits.size(); ++v) {
    const auto id = std::int32_t(v);
    if (top.size() < k) {
      top.push_back(id);
      std::push_heap(top.begin(), top.end(), better);
    } else if (better(id, top.front())) {
      std::pop_heap(top.begin(), top.end(), better);
      top.back() = id;
      std::push_heap(top.begin(), top.end(), better);
    }
  }
  std::sort_heap(top.begin(), top.end(), better);
}

// One (row, position)'s readout from its logits [vocab] into lens at index `at` (row · n +
// position): the top_k ids and probabilities, and the chosen token's probability and rank.
void read_position(std::span<const float> row_logits, std::size_t at,
                   const LogitLensOptions& options, std::vector<std::int32_t>& top,
                   LogitLens& lens) {
  const std::size_t k = options.top_k;
  // The softmax as top_next_tokens computes it (exp(l − max) / Σ exp(l − max) in double, summed
  // in id order), so the last row's probabilities are the forward's bit for bit.
  const double max = *std::max_element(row_logits.begin(), row_logits.end());
  double sum = 0.0;
  for (const float l : row_logits) sum += std::exp(double(l) - max);
  most_likely(row_logits, k, top);
  for (std::size_t j = 0; j < k; ++j) {
    lens.ids[at * k + j] = top[j];
    lens.probs[at * k + j] = float(std::exp(double(row_logits[std::size_t(top[j])]) - max) / sum);
  }
  if (!options.token) return;
  // The token's rank in the same order (logit descending, ties by the lower id).
  const std::int32_t token = *options.token;
  const float mine = row_logits[std::size_t(token)];
  std::size_t rank = 0;
  for (std::size_t v = 0; v < row_logits.size(); ++v) {
    if (row_logits[v] > mine || (row_logits[v] == mine && v < std::size_t(token))) ++rank;
  }
  lens.token_probs[at] = float(std::exp(double(mine) - max) / sum);
  lens.token_ranks[at] = std::int32_t(rank);
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
  // Every (row, position) pair's residual read through the final norm and the unembedding
  // kLensPositions at a time, gathered across rows: the unembedding is streamed once per chunk,
  // not once per row (each row's logits do not depend on the others in the call).
  const std::size_t pairs = lens.rows * n;
  AlignedVector<float> gathered;  // [positions, d]
  AlignedVector<float> logits;    // [positions, vocab]
  for (std::size_t first = 0; first < pairs; first += kLensPositions) {
    const std::size_t count = std::min(kLensPositions, pairs - first);
    gathered.resize(count * d);
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t at = first + i;  // row · n + position
      const float* from = model.residual(at / n).data() + (at % n) * d;
      std::copy(from, from + d, gathered.data() + i * d);
    }
    model.logits_of_residual(gathered.data(), count, logits);
    // Each position's readout on its own (the pool's threads take whole positions, so the values
    // are the same for any thread count).
    parallel_for(count, 1, [&](std::size_t begin, std::size_t end) {
      std::vector<std::int32_t> top;  // one position's top_k ids
      for (std::size_t i = begin; i < end; ++i) {
        read_position(std::span<const float>(logits.data() + i * V, V), first + i, options, top,
                      lens);
      }
    });
  }
  return lens;
}

}  // namespace attn
