// Row-wise, numerically stable softmax — the step that turns scores into attention weights —
// alone, and fused with the scale, the ALiBi bias and the mask that come before it.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>

#include "attention/ops/masks.hpp"
#include "attention/ops/simd.hpp"
#include "attention/tensor.hpp"

namespace attn {

// x_j <- x_j · factor for j < count (the softmax's 1/Σ, flash attention's rescaling).
inline void scale_values(float* x, std::size_t count, float factor) {
  std::size_t j = 0;
#if ATTN_SIMD
  constexpr std::size_t W = simd::kWidth;
  const simd::Floats f(factor);
  for (; j + W <= count; j += W) (simd::Floats::load_unaligned(x + j) * f).store_unaligned(x + j);
#endif
  for (; j < count; ++j) x[j] *= factor;
}

// In place, each row: x_j <- e^{x_j - max(x)} / sum_k e^{x_k - max(x)}.
// -inf entries (masked keys) become exactly 0; a row whose entries are all -inf (a query
// with no visible key) becomes all zeros instead of NaN. Finite logits of any size (±1e4 …)
// give finite weights, since the largest exponent is always e^0 = 1.
void softmax_rows(MatView x);

// How one head's raw scores s_ij = q_i·k_j become logits:
//   x_ij = cap(s_ij·scale) − slope·|i − j|   (the ALiBi term only with alibi; cap(y) =
//   softcap·tanh(y/softcap) with a soft-cap, y without), or −inf where the mask hides key j
//   from query i (mask == nullptr: every key visible).
struct LogitParams {
  float scale = 1.0f;
  bool alibi = false;
  float alibi_slope = 0.0f;
  const MaskSpec* mask = nullptr;
  float softcap = 0.0f;  // > 0: Gemma 2's attn_logit_softcapping
};

// row [count]: the scores of query i for keys j0 … j0 + count - 1 (of kv_n keys) become their
// logits, in place; returns their maximum (−inf when every one is hidden).
float prepare_logits(float* row, std::size_t count, std::size_t i, std::size_t j0, std::size_t kv_n,
                     const LogitParams& params);

// x_j <- e^{x_j − shift} for j < count, where every x_j <= shift (−inf -> 0, see
// exp_nonpositive_batch); returns the sum of the new values.
float exp_shifted_sum(float* x, std::size_t count, float shift);

// Scale + ALiBi + mask + softmax in one call: scores [rows, kv_n] holds the raw scores of
// queries first_query … first_query + rows − 1; each row becomes its softmax weights. Per row it
// touches only the keys its mask range can see (rounded out to whole SIMD vectors) and writes
// exact zeros elsewhere, so cells outside that range need not hold computed scores. The result
// is bit-identical to running prepare_logits and softmax over the whole row.
void scale_mask_softmax_rows(MatView scores, std::size_t first_query, const LogitParams& params);

namespace reference {

// The scalar reference (double accumulation, no SIMD) the tests compare the kernel with.
// Row-wise stable softmax in place; -inf -> 0, all -inf rows -> zeros.
inline void softmax_rows(MatView x) {
  for (std::size_t i = 0; i < x.rows; ++i) {
    double max = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < x.cols; ++j) max = std::max(max, double(x(i, j)));
    if (max == -std::numeric_limits<double>::infinity()) {
      for (std::size_t j = 0; j < x.cols; ++j) x(i, j) = 0.0f;
      continue;
    }
    double sum = 0.0;
    for (std::size_t j = 0; j < x.cols; ++j) sum += std::exp(double(x(i, j)) - max);
    for (std::size_t j = 0; j < x.cols; ++j) {
      x(i, j) = static_cast<float>(std::exp(double(x(i, j)) - max) / sum);
    }
  }
}

}  // namespace reference

}  // namespace attn
