// Softmax cross-entropy over logits with integer targets (a target < 0 is ignored, as PyTorch's
// ignore_index): forward (the mean over the counted targets; keeps the probabilities) and
// backward (dlogits = (softmax − one_hot) / count on counted rows, 0 on ignored ones).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace attn {

// The number of targets that count (>= 0).
inline std::size_t count_targets(const std::int32_t* targets, std::size_t rows) {
  std::size_t count = 0;
  for (std::size_t r = 0; r < rows; ++r) count += targets[r] >= 0;
  return count;
}

namespace reference {

// probs [rows, vocab] = softmax(logits [rows, vocab]); returns mean over rows with
// targets[r] >= 0 of −log probs[r, targets[r]] (0 when none counts). Targets must be < vocab.
template <class T>
T cross_entropy_forward(const T* logits, const std::int32_t* targets, T* probs, std::size_t rows,
                        std::size_t vocab) {
  double total = 0.0;
  for (std::size_t r = 0; r < rows; ++r) {
    const T* z = logits + r * vocab;
    double max = z[0], sum = 0.0;
    for (std::size_t v = 1; v < vocab; ++v) max = std::max(max, double(z[v]));
    for (std::size_t v = 0; v < vocab; ++v) sum += std::exp(double(z[v]) - max);
    for (std::size_t v = 0; v < vocab; ++v) {
      probs[r * vocab + v] = T(std::exp(double(z[v]) - max) / sum);
    }
    if (targets[r] >= 0) total += max + std::log(sum) - double(z[targets[r]]);
  }
  const std::size_t count = count_targets(targets, rows);
  return count ? T(total / double(count)) : T(0);
}

// dlogits [rows, vocab] = (probs − one_hot(target)) / count on counted rows, 0 on ignored ones
// (overwrites; dlogits may alias probs).
template <class T>
void cross_entropy_backward(const T* probs, const std::int32_t* targets, T* dlogits,
                            std::size_t rows, std::size_t vocab) {
  const std::size_t count = count_targets(targets, rows);
  const T inv = count ? T(1.0 / double(count)) : T(0);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t v = 0; v < vocab; ++v) {
      const T p = probs[r * vocab + v];
      dlogits[r * vocab + v] =
          targets[r] < 0 ? T(0) : (p - (std::int32_t(v) == targets[r] ? T(1) : T(0))) * inv;
    }
  }
}

}  // namespace reference

// The same contracts in float with the core's vectorized exp (the loss summed in double).
float cross_entropy_forward(const float* logits, const std::int32_t* targets, float* probs,
                            std::size_t rows, std::size_t vocab);
void cross_entropy_backward(const float* probs, const std::int32_t* targets, float* dlogits,
                            std::size_t rows, std::size_t vocab);

}  // namespace attn
