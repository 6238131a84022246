// Stable softmax over rows with the vectorized exp, alone and fused (see softmax.hpp).
#include "attention/ops/softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attention/ops/exp.hpp"
#include "attention/ops/simd.hpp"
#include "attention/ops/softcap.hpp"

namespace attn {

namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
constexpr std::size_t W = simd::kWidth;

float row_max(const float* x, std::size_t count) {
  std::size_t j = 0;
  float best = kMinusInf;
#if ATTN_SIMD
  using simd::Floats;
  if (count >= W) {
    Floats acc = Floats::load_unaligned(x);
    for (j = W; j + W <= count; j += W) acc = xsimd::max(acc, Floats::load_unaligned(x + j));
    best = xsimd::reduce_max(acc);
  }
#endif
  for (; j < count; ++j) best = std::max(best, x[j]);
  return best;
}

// The ALiBi term for query i and key j: −slope·|i − j| (distances are exact in float).
inline float alibi_term(float neg_slope, std::size_t i, std::size_t j) {
  return neg_slope * static_cast<float>(i > j ? i - j : j - i);
}

}  // namespace

float exp_shifted_sum(float* x, std::size_t count, float shift) {
#if ATTN_SIMD
  using simd::Floats;
  const Floats shift_vec(shift);
  Floats acc(0.0f);
  std::size_t j = 0;
  for (; j + W <= count; j += W) {
    const Floats e = exp_nonpositive_batch(Floats::load_unaligned(x + j) - shift_vec);
    e.store_unaligned(x + j);
    acc += e;
  }
  float sum = xsimd::reduce_add(acc);
  if (j < count) {
    alignas(64) float tail[W];
    for (std::size_t t = 0; t < W; ++t) tail[t] = j + t < count ? x[j + t] - shift : kMinusInf;
    const Floats e = exp_nonpositive_batch(Floats::load_aligned(tail));
    e.store_aligned(tail);
    for (std::size_t t = 0; j + t < count; ++t) x[j + t] = tail[t];
    sum += xsimd::reduce_add(e);
  }
  return sum;
#else
  double sum = 0.0;
  for (std::size_t j = 0; j < count; ++j) {
    const float e = static_cast<float>(std::exp(double(x[j]) - double(shift)));
    x[j] = e < std::numeric_limits<float>::min() ? 0.0f : e;  // no subnormals, as on SIMD
    sum += x[j];
  }
  return static_cast<float>(sum);
#endif
}

float prepare_logits(float* row, std::size_t count, std::size_t i, std::size_t j0, std::size_t kv_n,
                     const LogitParams& params) {
  // The visible range, relative to j0: [a, b).
  const KeyRange range = params.mask ? visible_keys(*params.mask, i, kv_n) : KeyRange{0, kv_n};
  const std::size_t a = std::clamp(range.begin, j0, j0 + count) - j0;
  const std::size_t b = std::max(a, std::clamp(range.end, j0, j0 + count) - j0);
  std::fill(row, row + a, kMinusInf);
  std::fill(row + b, row + count, kMinusInf);
  const float scale = params.scale;
  const float neg_slope = -params.alibi_slope;
  std::size_t j = a;
  float max = kMinusInf;
  if (params.softcap > 0.0f) {  // scaled, capped (softcap.hpp), then the ALiBi term
    for (j = a; j < b; ++j) row[j] *= scale;
    softcap_forward(row + a, b - a, params.softcap);
    for (j = a; j < b; ++j) {
      if (params.alibi) row[j] += alibi_term(neg_slope, i, j0 + j);
      max = std::max(max, row[j]);
    }
    j = b;
  }
#if ATTN_SIMD
  using simd::Floats;
  const Floats scale_vec(scale);
  Floats max_vec(max);
  if (j == b) {
    // capped above: nothing left for the loops below
  } else if (params.alibi) {
    alignas(64) float lanes[W];
    for (std::size_t t = 0; t < W; ++t) lanes[t] = float(t);
    const Floats lane = Floats::load_aligned(lanes);
    const Floats query(static_cast<float>(i));
    const Floats neg_slope_vec(neg_slope);
    for (; j + W <= b; j += W) {
      const Floats key = Floats(static_cast<float>(j0 + j)) + lane;  // exact below 2^24
      const Floats x =
          Floats::load_unaligned(row + j) * scale_vec + neg_slope_vec * xsimd::abs(key - query);
      x.store_unaligned(row + j);
      max_vec = xsimd::max(max_vec, x);
    }
  } else {
    for (; j + W <= b; j += W) {
      const Floats x = Floats::load_unaligned(row + j) * scale_vec;
      x.store_unaligned(row + j);
      max_vec = xsimd::max(max_vec, x);
    }
  }
  max = xsimd::reduce_max(max_vec);
#endif
  for (; j < b; ++j) {
    float x = row[j] * scale;
    if (params.alibi) x = x + alibi_term(neg_slope, i, j0 + j);
    row[j] = x;
    max = std::max(max, x);
  }
  if (params.mask && has_holes(*params.mask)) {
    for (j = a; j < b; ++j) {
      if (in_hole(*params.mask, i, j0 + j, kv_n)) row[j] = kMinusInf;
    }
    max = row_max(row + a, b - a);
  }
  return max;
}

void scale_mask_softmax_rows(MatView scores, std::size_t first_query, const LogitParams& params) {
  const std::size_t kv_n = scores.cols;
  for (std::size_t r = 0; r < scores.rows; ++r) {
    const std::size_t i = first_query + r;
    float* row = scores.row(r);
    const KeyRange range = params.mask ? visible_keys(*params.mask, i, kv_n) : KeyRange{0, kv_n};
    // Whole vectors around the range, so every lane sums the same cells as a full-row pass.
    const std::size_t begin = std::min(range.begin / W * W, kv_n);
    const std::size_t end = std::min((range.end + W - 1) / W * W, kv_n);
    if (end <= begin) {
      std::fill(row, row + kv_n, 0.0f);
      continue;
    }
    std::fill(row, row + begin, 0.0f);
    std::fill(row + end, row + kv_n, 0.0f);
    const float max = prepare_logits(row + begin, end - begin, i, begin, kv_n, params);
    if (max == kMinusInf) {  // every key masked: zeros, not NaN
      std::fill(row + begin, row + end, 0.0f);
      continue;
    }
    const float sum = exp_shifted_sum(row + begin, end - begin, max);
    scale_values(row + begin, end - begin, 1.0f / sum);
  }
}

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
