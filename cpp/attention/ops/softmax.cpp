// Stable softmax over rows with the vectorized exp (see softmax.hpp).
#include "attention/ops/softmax.hpp"

#include <algorithm>
#include <limits>

#include "attention/ops/exp.hpp"
#include "attention/reference.hpp"

namespace attn {

#if ATTN_SIMD
namespace {

using simd::Floats;
constexpr std::size_t W = simd::kWidth;
constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

float row_max(const float* x, std::size_t count) {
  std::size_t j = 0;
  float best = kMinusInf;
  if (count >= W) {
    Floats acc = Floats::load_unaligned(x);
    for (j = W; j + W <= count; j += W) acc = xsimd::max(acc, Floats::load_unaligned(x + j));
    best = xsimd::reduce_max(acc);
  }
  for (; j < count; ++j) best = std::max(best, x[j]);
  return best;
}

// x_j <- e^{x_j - shift}; returns the sum of the new values.
float exp_shifted_sum(float* x, std::size_t count, float shift) {
  const Floats shift_vec(shift);
  Floats acc(0.0f);
  std::size_t j = 0;
  for (; j + W <= count; j += W) {
    const Floats e = exp_batch(Floats::load_unaligned(x + j) - shift_vec);
    e.store_unaligned(x + j);
    acc += e;
  }
  float sum = xsimd::reduce_add(acc);
  if (j < count) {
    alignas(64) float tail[W];
    for (std::size_t t = 0; t < W; ++t) tail[t] = j + t < count ? x[j + t] - shift : kMinusInf;
    const Floats e = exp_batch(Floats::load_aligned(tail));
    e.store_aligned(tail);
    for (std::size_t t = 0; j + t < count; ++t) x[j + t] = tail[t];
    sum += xsimd::reduce_add(e);
  }
  return sum;
}

void scale_values(float* x, std::size_t count, float factor) {
  const Floats f(factor);
  std::size_t j = 0;
  for (; j + W <= count; j += W) (Floats::load_unaligned(x + j) * f).store_unaligned(x + j);
  for (; j < count; ++j) x[j] *= factor;
}

}  // namespace
#endif

void softmax_rows(MatView x) {
#if ATTN_SIMD
  for (std::size_t i = 0; i < x.rows; ++i) {
    float* row = x.row(i);
    const float max = row_max(row, x.cols);
    if (max == kMinusInf) {  // every key masked: zeros, not NaN
      std::fill(row, row + x.cols, 0.0f);
      continue;
    }
    const float sum = exp_shifted_sum(row, x.cols, max);
    scale_values(row, x.cols, 1.0f / sum);
  }
#else
  reference::softmax_rows(x);
#endif
}

}  // namespace attn
