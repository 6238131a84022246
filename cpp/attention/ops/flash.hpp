// Flash-style attention for one head: Q·Kᵀ, mask, softmax and A·V tile by tile with an online
// softmax, so the n × kv_n weights never exist (memory O(n·d), not O(n²)).
#pragma once

#include "attention/ops/matmul.hpp"
#include "attention/ops/softmax.hpp"
#include "attention/tensor.hpp"

namespace attn {

// Queries per tile and keys per tile (a multiple of kPanelWidth).
inline constexpr std::size_t kFlashQueryBlock = 32;
inline constexpr std::size_t kFlashKeyBlock = 128;

// Scratch reused across calls (grows to the largest size seen); no state between calls.
struct FlashWorkspace {
  PackedMatrix keys;               // Kᵀ packed          [d_k, kv_n]
  PackedMatrix values;             // V packed           [kv_n, d_v]
  AlignedVector<float> tile;       // scores / P         [kFlashQueryBlock, kFlashKeyBlock]
  AlignedVector<float> row_stats;  // m, l, new m, e^{m - new m} per query of the block
};

// context = softmax(mask(Q·Kᵀ · scale + bias)) · V  — the same as scaled_dot_product_attention's
// context (up to float rounding), without its weights.
// q [n, d_k], k [kv_n, d_k], v [kv_n, d_v], context [n, d_v] (out); any strides.
// For each block of kFlashQueryBlock queries it walks the key tiles of kFlashKeyBlock keys that
// the mask's kind lets any of them see (visible_keys: causal, sliding window and prefix-LM
// skip whole tiles), keeping per query the running maximum m and sum l of e^{x - m}:
//   m' = max(m, max_j x_j),  l' = l·e^{m - m'} + Σ_j e^{x_j - m'},  O' = O·e^{m - m'} + P·V_tile
// and divides O by l at the end. A query with no visible key gets a zero context.
void flash_attention(ConstMatView q, ConstMatView k, ConstMatView v, const LogitParams& params,
                     MatView context, FlashWorkspace& workspace);

}  // namespace attn
