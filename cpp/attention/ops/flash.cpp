// Tiled attention with an online softmax (see flash.hpp).
#include "attention/ops/flash.hpp"

#include <algorithm>
#include <limits>

#include "attention/ops/exp.hpp"
#include "attention/ops/key_block.hpp"

namespace attn {

namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
constexpr std::size_t BR = kFlashQueryBlock;
constexpr std::size_t BC = kFlashKeyBlock;
static_assert(BC % kPanelWidth == 0, "key tiles start on packed panel boundaries");

}  // namespace

void flash_attention(ConstMatView q, ConstMatView k, ConstMatView v, const LogitParams& params,
                     MatView context, FlashWorkspace& ws) {
  const std::size_t n = q.rows, kv_n = k.rows, dv = v.cols;
  pack_transposed(k, ws.keys);
  pack_matrix(v, ws.values);
  ws.tile.resize(BR * BC);
  ws.row_stats.resize(4 * BR);
  float* m = ws.row_stats.data();  // running max per query
  float* l = m + BR;               // running sum of e^{x - m}
  float* m_new = l + BR;
  float* alpha = m_new + BR;  // e^{m - m_new}: how much the old O and l shrink

  for (std::size_t i0 = 0; i0 < n; i0 += BR) {
    const std::size_t rows = std::min(BR, n - i0);
    const MatView out = context.row_block(i0, rows);
    for (std::size_t r = 0; r < rows; ++r) {
      std::fill(out.row(r), out.row(r) + dv, 0.0f);
      m[r] = kMinusInf;
      l[r] = 0.0f;
    }
    // Key tiles from the panel holding the first visible key up to the panel holding the last:
    // a tile never extends past the block's last visible key by more than one panel.
    const KeyBlock keys = visible_key_block(params.mask, i0, rows, kv_n);
    const std::size_t end = keys.panel_end;
    for (std::size_t j0 = keys.panel_begin; j0 < end; j0 += BC) {
      const std::size_t cols = std::min(BC, end - j0);
      const MatView s(ws.tile.data(), rows, cols, BC);
      matmul_packed(q.row_block(i0, rows), ws.keys, 0, j0, s);
      for (std::size_t r = 0; r < rows; ++r) {
        const float tile_max = prepare_logits(s.row(r), cols, i0 + r, j0, kv_n, params);
        m_new[r] = std::max(m[r], tile_max);
        // m = -inf and m_new finite: e^{-inf} = 0 (O and l are still zero anyway).
        alpha[r] = m_new[r] == kMinusInf ? 0.0f : m[r] - m_new[r];
      }
      exp_values(alpha, alpha, rows);
      for (std::size_t r = 0; r < rows; ++r) {
        float* p = s.row(r);
        if (m_new[r] == kMinusInf) {  // nothing visible to this query yet: P = 0
          std::fill(p, p + cols, 0.0f);
          continue;
        }
        const float sum = exp_shifted_sum(p, cols, m_new[r]);
        l[r] = l[r] * alpha[r] + sum;
        if (alpha[r] != 1.0f) scale_values(out.row(r), dv, alpha[r]);
        m[r] = m_new[r];
      }
      matmul_packed(s, ws.values, j0, 0, out, nullptr, true);
    }
    for (std::size_t r = 0; r < rows; ++r) {
      if (l[r] > 0.0f) scale_values(out.row(r), dv, 1.0f / l[r]);
    }
  }
}

}  // namespace attn
