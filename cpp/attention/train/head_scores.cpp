// Head diagnostics (previous-token, induction, same-token, first-token) and the induction probe.
#include "attention/train/head_scores.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>

#include "attention/error.hpp"
#include "attention/rng.hpp"
#include "attention/train/tasks.hpp"

namespace attn {
namespace {

// The probe draws distinct tokens by a partial shuffle of the whole vocabulary (one int per token):
// up to the largest vocabulary a tokenizer reads (2^20 ids; Qwen2.5's 151 936, Gemma's 262 144).
constexpr std::size_t kMaxProbeVocab = std::size_t{1} << 20;

// A running mean that is NaN when nothing was added.
struct Mean {
  double sum = 0.0;
  std::size_t count = 0;
  void add(double v) {
    sum += v;
    ++count;
  }
  double value() const {
    return count == 0 ? std::numeric_limits<double>::quiet_NaN() : sum / static_cast<double>(count);
  }
};

}  // namespace

std::vector<HeadScores> head_scores(std::span<const float> weights, std::size_t heads,
                                    const Batch& probe) {
  const std::size_t batch = probe.batch;
  const std::size_t n = probe.n;
  if (batch < 1 || n < 2) {
    throw Error("a probe needs at least one sequence of at least 2 tokens, got batch " +
                std::to_string(batch) + ", n " + std::to_string(n));
  }
  if (probe.ids.size() != batch * n) {
    throw Error("the probe has " + std::to_string(probe.ids.size()) +
                " ids, expected batch * n = " + std::to_string(batch * n));
  }
  if (heads < 1 || heads > weights.size()) {
    throw Error("head scores need 1 to " + std::to_string(weights.size()) +
                " heads for these weights, got " + std::to_string(heads));
  }
  if (weights.size() != batch * heads * n * n) {
    throw Error("attention weights have " + std::to_string(weights.size()) +
                " values, expected batch * heads * n * n = " + std::to_string(batch) + " * " +
                std::to_string(heads) + " * " + std::to_string(n) + " * " + std::to_string(n) +
                " = " + std::to_string(batch * heads * n * n));
  }

  std::vector<HeadScores> out(heads);
  std::vector<char> successor(n);  // successor[j]: j is in S(i) for the current query i
  for (std::size_t h = 0; h < heads; ++h) {
    Mean previous, induction, same, first;
    for (std::size_t b = 0; b < batch; ++b) {
      const std::int32_t* ids = probe.ids.data() + b * n;
      const float* a = weights.data() + (b * heads + h) * n * n;  // [n, n]
      for (std::size_t i = 1; i < n; ++i) {
        const float* row = a + i * n;
        previous.add(row[i - 1]);
        first.add(row[0]);
        double same_mass = 0.0;
        double induction_mass = 0.0;
        bool has_same = false;
        bool has_successor = false;
        std::fill(successor.begin(), successor.begin() + static_cast<std::ptrdiff_t>(i), 0);
        for (std::size_t j = 0; j < i; ++j) {
          if (ids[j] != ids[i]) continue;
          has_same = true;
          same_mass += row[j];
          if (j + 1 < i) successor[j + 1] = 1;
        }
        for (std::size_t s = 1; s < i; ++s) {
          if (!successor[s]) continue;
          has_successor = true;
          induction_mass += row[s];
        }
        if (has_same) same.add(same_mass);
        if (has_successor) induction.add(induction_mass);
      }
    }
    out[h] = {previous.value(), induction.value(), same.value(), first.value()};
  }
  return out;
}

Batch induction_probe(std::uint32_t seed, std::size_t half_length, std::size_t vocab,
                      std::size_t batch) {
  if (half_length < 2) {
    throw Error("an induction probe needs a half length of at least 2, got " +
                std::to_string(half_length));
  }
  if (vocab < 2 || vocab > kMaxProbeVocab) {
    throw Error("an induction probe needs a vocabulary of 2 to " + std::to_string(kMaxProbeVocab) +
                " tokens, got " + std::to_string(vocab));
  }
  if (batch < 1 || half_length > Task::kMaxTokens / 2 ||
      batch > Task::kMaxTokens / (2 * half_length)) {
    throw Error("an induction probe has 1 to " + std::to_string(Task::kMaxTokens) +
                " tokens, got batch " + std::to_string(batch) + " of half length " +
                std::to_string(half_length));
  }
  const std::size_t n = 2 * half_length;
  Batch probe;
  probe.batch = batch;
  probe.n = n;
  probe.ids.assign(batch * n, 0);
  probe.targets.assign(batch * n, -1);
  NumpyRandomState rng(seed);
  for (std::size_t b = 0; b < batch; ++b) {
    const auto ids = std::span(probe.ids).subspan(b * n, n);
    fill_repeated_random(rng, vocab, half_length, ids);
    for (std::size_t i = half_length; i + 1 < n; ++i) probe.targets[b * n + i] = ids[i + 1];
  }
  return probe;
}

}  // namespace attn
