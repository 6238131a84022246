// One head of scaled dot-product attention: fused and block-skipping, or step by step for the
// trace (see sdpa.hpp).
#include "attention/ops/sdpa.hpp"

#include <algorithm>

#include "attention/ops/key_block.hpp"
#include "attention/ops/masks.hpp"
#include "attention/ops/positional.hpp"
#include "attention/ops/softcap.hpp"

namespace attn {

namespace {

// Query rows per block: the unit of skipping masked key blocks.
constexpr std::size_t kQueryBlock = 32;

void snapshot(Matrix* into, ConstMatView from) {
  if (into == nullptr) return;
  into->resize(from.rows, from.cols);
  for (std::size_t i = 0; i < from.rows; ++i) {
    std::copy(from.row(i), from.row(i) + from.cols, into->row(i));
  }
}

// x = x · scale + bias (bias may be null).
void scale_and_bias(MatView x, float scale, const float* bias) {
  for (std::size_t i = 0; i < x.rows; ++i) {
    float* row = x.row(i);
    const float* bias_row = bias ? bias + i * x.cols : nullptr;
    for (std::size_t j = 0; j < x.cols; ++j) {
      row[j] = row[j] * scale + (bias_row ? bias_row[j] : 0.0f);
    }
  }
}

// Every step on the whole matrix, with a copy after each (the trace's path).
void step_by_step(ConstMatView q, ConstMatView k, ConstMatView v, const LogitParams& params,
                  MatView weights, MatView context, SdpaWorkspace& ws, SdpaSnapshots& snapshots) {
  const std::size_t n = q.rows, kv_n = k.rows;
  matmul_transposed(q, k, weights, ws.keys);  // scores, computed in the weights buffer
  snapshot(snapshots.scores, weights);
  scale_and_bias(weights, params.scale, nullptr);
  snapshot(snapshots.scaled, weights);
  if (params.softcap > 0.0f) {
    for (std::size_t i = 0; i < n; ++i) softcap_forward(weights.row(i), kv_n, params.softcap);
    snapshot(snapshots.capped, weights);
  }
  if (params.alibi) {
    ws.bias.resize(n, kv_n);
    alibi_bias(ws.bias, params.alibi_slope);
    scale_and_bias(weights, 1.0f, ws.bias.data());
  }
  if (params.mask && masks_anything(*params.mask)) {
    build_visibility(*params.mask, n, kv_n, ws.visible);
    apply_mask(weights, ws.visible.data());
  }
  snapshot(snapshots.masked, weights);
  softmax_rows(weights);
  matmul(weights, v, context, ws.values);
}

}  // namespace

void scaled_dot_product_attention(ConstMatView q, ConstMatView k, ConstMatView v,
                                  const LogitParams& params, MatView weights, MatView context,
                                  SdpaWorkspace& ws, SdpaSnapshots* snapshots) {
  if (snapshots) {
    step_by_step(q, k, v, params, weights, context, ws, *snapshots);
    return;
  }
  const std::size_t n = q.rows, kv_n = k.rows;
  pack_transposed(k, ws.keys);
  pack_matrix(v, ws.values);
  for (std::size_t i0 = 0; i0 < n; i0 += kQueryBlock) {
    const std::size_t rows = std::min(kQueryBlock, n - i0);
    // Keys any query of the block may see; outside them every weight is an exact zero.
    const KeyBlock keys = visible_key_block(params.mask, i0, rows, kv_n);
    const std::size_t lo = keys.begin, hi = keys.end;
    const MatView block = weights.row_block(i0, rows);
    const MatView out = context.row_block(i0, rows);
    if (hi > lo) {
      const std::size_t c0 = keys.panel_begin, c1 = keys.panel_end;
      matmul_packed(q.row_block(i0, rows), ws.keys, 0, c0, block.col_block(c0, c1 - c0));
    }
    scale_mask_softmax_rows(block, i0, params);
    if (hi > lo) {
      matmul_packed(block.col_block(lo, hi - lo), ws.values, lo, 0, out);
    } else {
      for (std::size_t r = 0; r < rows; ++r) std::fill(out.row(r), out.row(r) + out.cols, 0.0f);
    }
  }
}

}  // namespace attn
