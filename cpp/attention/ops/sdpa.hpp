// Scaled dot-product attention for one head: scores, scale, bias, mask, softmax, A·V.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>
#include "attention/ops/masks.hpp"

#include "attention/ops/matmul.hpp"
#include "attention/ops/softmax.hpp"
#include "attention/tensor.hpp"

namespace attn {

// Copies of the intermediates, for the trace; each [n, kv_n]. Null members are skipped.
struct SdpaSnapshots {
  Matrix* scores = nullptr;  // Q·Kᵀ
  Matrix* scaled = nullptr;  // · scale
  Matrix* capped = nullptr;  // soft-capped (only with a soft-cap)
  Matrix* masked = nullptr;  // + bias, hidden cells = -inf
};

// Scratch reused across calls (grows to the largest size seen); no state between calls.
struct SdpaWorkspace {
  PackedMatrix keys;                  // Kᵀ packed
  PackedMatrix values;                // V packed
  Matrix bias;                        // [n, kv_n] ALiBi bias (step by step, with snapshots, only)
  std::vector<std::uint8_t> visible;  // [n, kv_n] (step by step only)
};

// weights = softmax(mask(cap(Q·Kᵀ · scale) + bias)),  context = weights · V (cap: the params'
// soft-cap, when it has one).
// q [n, d_k], k [kv_n, d_k], v [kv_n, d_v], weights [n, kv_n] (out), context [n, d_v] (out).
// A query with no visible key gets zero weights and context. Without snapshots the scale,
// bias, mask and softmax run fused, row block by row block, and work the mask's kind hides is
// skipped: Q·Kᵀ for key blocks outside a query block's visible range, and those keys in A·V
// (their weights are exact zeros, so the result is the same). With snapshots every step runs
// on the whole [n, kv_n] matrix in turn and is copied out.
void scaled_dot_product_attention(ConstMatView q, ConstMatView k, ConstMatView v,
                                  const LogitParams& params, MatView weights, MatView context,
                                  SdpaWorkspace& workspace, SdpaSnapshots* snapshots = nullptr);

namespace reference {

// The scalar reference (double accumulation, no SIMD) the tests compare the kernel with.
// One head: weights = softmax(mask(cap(Q·Kᵀ·scale) − slope·|i − j|)), context = weights·V, in
// double. q [n, d_k], k [kv_n, d_k], v [kv_n, d_v], weights [n, kv_n], context [n, d_v]; mask
// may be null (all visible); alibi_slope 0 = no bias; softcap 0 = no cap (else cap(y) =
// softcap·tanh(y/softcap)). A query with no visible key: zeros.
inline void attention_head(ConstMatView q, ConstMatView k, ConstMatView v, double scale,
                           double alibi_slope, const MaskSpec* mask, MatView weights,
                           MatView context, double softcap = 0.0) {
  const double minus_inf = -std::numeric_limits<double>::infinity();
  std::vector<double> logits(k.rows);
  for (std::size_t i = 0; i < q.rows; ++i) {
    double max = minus_inf;
    for (std::size_t j = 0; j < k.rows; ++j) {
      logits[j] = minus_inf;
      if (mask && !is_visible(*mask, i, j, k.rows)) continue;
      double dot = 0.0;
      for (std::size_t c = 0; c < q.cols; ++c) dot += double(q(i, c)) * double(k(j, c));
      const double scaled =
          softcap > 0.0 ? softcap * std::tanh(dot * scale / softcap) : dot * scale;
      logits[j] = scaled - alibi_slope * std::abs(double(i) - double(j));
      max = std::max(max, logits[j]);
    }
    double sum = 0.0;
    for (std::size_t j = 0; j < k.rows; ++j) {
      logits[j] = max == minus_inf ? 0.0 : std::exp(logits[j] - max);
      sum += logits[j];
    }
    for (std::size_t c = 0; c < v.cols; ++c) context(i, c) = 0.0f;
    for (std::size_t j = 0; j < k.rows; ++j) {
      const double a = sum > 0.0 ? logits[j] / sum : 0.0;
      weights(i, j) = static_cast<float>(a);
    }
    for (std::size_t c = 0; c < v.cols; ++c) {
      double acc = 0.0;
      for (std::size_t j = 0; j < k.rows; ++j) {
        if (sum > 0.0) acc += logits[j] / sum * double(v(j, c));
      }
      context(i, c) = static_cast<float>(acc);
    }
  }
}

}  // namespace reference

}  // namespace attn
