// Scaled dot-product attention for one head: scores, scale, bias, mask, softmax, A·V.
#pragma once

#include <cstdint>

#include "attention/tensor.hpp"

namespace attn {

struct SdpaParams {
  float scale = 1.0f;                     // 1/√d_k, or 1 with scaling switched off
  const float* bias = nullptr;            // [n, kv_n] added after scaling (ALiBi), or nullptr
  const std::uint8_t* visible = nullptr;  // [n, kv_n] 1 = visible, or nullptr (all visible)
};

// Copies of the intermediates, for the trace; each [n, kv_n]. Null members are skipped.
struct SdpaSnapshots {
  Matrix* scores = nullptr;  // Q·Kᵀ
  Matrix* scaled = nullptr;  // · scale
  Matrix* masked = nullptr;  // + bias, hidden cells = -inf
};

// weights = softmax(mask(Q·Kᵀ · scale + bias)),  context = weights · V.
// q [n, d_k], k [kv_n, d_k], v [kv_n, d_v], weights [n, kv_n] (out), context [n, d_v] (out).
// `packed` is reusable scratch. A query with no visible key gets zero weights and context.
void scaled_dot_product_attention(ConstMatView q, ConstMatView k, ConstMatView v,
                                  const SdpaParams& params, MatView weights, MatView context,
                                  AlignedVector<float>& packed, SdpaSnapshots* snapshots = nullptr);

}  // namespace attn
