// The keys a block of queries may see under the mask's kind, and that range rounded out to the
// packed panels the matmul kernels start on (shared by the fused SDPA and flash attention).
#pragma once

#include <algorithm>
#include <cstddef>

#include "attention/ops/masks.hpp"
#include "attention/ops/matmul.hpp"

namespace attn {

struct KeyBlock {
  std::size_t begin = 0, end = 0;              // visible keys [begin, end); empty if end <= begin
  std::size_t panel_begin = 0, panel_end = 0;  // rounded out to whole panels (end within kv_n)
};

// Queries first_query … first_query + rows − 1 (rows >= 1) of kv_n keys; mask null: all visible.
inline KeyBlock visible_key_block(const MaskSpec* mask, std::size_t first_query, std::size_t rows,
                                  std::size_t kv_n) {
  KeyBlock block{0, kv_n, 0, 0};
  if (mask) {
    block.begin = visible_keys(*mask, first_query, kv_n).begin;
    block.end = visible_keys(*mask, first_query + rows - 1, kv_n).end;
  }
  block.panel_begin = block.begin / kPanelWidth * kPanelWidth;
  block.panel_end = std::min((block.end + kPanelWidth - 1) / kPanelWidth * kPanelWidth, kv_n);
  return block;
}

}  // namespace attn
