// Scaled dot-product attention for one head: scores, scale, bias, mask, softmax, A·V.
#pragma once

#include <cstdint>
#include <vector>

#include "attention/ops/matmul.hpp"
#include "attention/ops/softmax.hpp"
#include "attention/tensor.hpp"

namespace attn {

// Copies of the intermediates, for the trace; each [n, kv_n]. Null members are skipped.
struct SdpaSnapshots {
  Matrix* scores = nullptr;  // Q·Kᵀ
  Matrix* scaled = nullptr;  // · scale
  Matrix* masked = nullptr;  // + bias, hidden cells = -inf
};

// Scratch reused across calls (grows to the largest size seen); no state between calls.
struct SdpaWorkspace {
  PackedMatrix keys;                  // Kᵀ packed
  PackedMatrix values;                // V packed
  Matrix bias;                        // [n, kv_n] ALiBi bias (step by step, with snapshots, only)
  std::vector<std::uint8_t> visible;  // [n, kv_n] (step by step only)
};

// weights = softmax(mask(Q·Kᵀ · scale + bias)),  context = weights · V.
// q [n, d_k], k [kv_n, d_k], v [kv_n, d_v], weights [n, kv_n] (out), context [n, d_v] (out).
// A query with no visible key gets zero weights and context. Without snapshots the scale,
// bias, mask and softmax run fused, row block by row block, and work the mask's kind hides is
// skipped: Q·Kᵀ for key blocks outside a query block's visible range, and those keys in A·V
// (their weights are exact zeros, so the result is the same). With snapshots every step runs
// on the whole [n, kv_n] matrix in turn and is copied out.
void scaled_dot_product_attention(ConstMatView q, ConstMatView k, ConstMatView v,
                                  const LogitParams& params, MatView weights, MatView context,
                                  SdpaWorkspace& workspace, SdpaSnapshots* snapshots = nullptr);

}  // namespace attn
