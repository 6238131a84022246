// Causal multi-head attention forward and backward on the SIMD matmul, see causal_attention.hpp.
#include "attention/ops/causal_attention.hpp"

#include <algorithm>

#include "attention/ops/exp.hpp"
#include "attention/ops/vec.hpp"

namespace attn {

void causal_softmax_row(float* row, std::size_t first, std::size_t last, float scale) {
  const std::size_t seen = last + 1 - first;
  float max = row[first];
  for (std::size_t j = first + 1; j <= last; ++j) max = std::max(max, row[j]);
  for (std::size_t j = first; j <= last; ++j) row[j] = (row[j] - max) * scale;
  exp_values(row + first, row + first, seen);
  vec::scale(1.0f / vec::sum(row + first, seen), row + first, seen);
  std::fill(row, row + first, 0.0f);
}

void causal_attention_forward(const float* qkv, float* att, float* ctx, std::size_t batch,
                              std::size_t n, const AttentionShape& shape,
                              AttentionScratch& scratch) {
  const std::size_t dk = shape.head_dim, ld = shape.row(), heads = shape.heads;
  const std::size_t ctx_ld = shape.q_width();
  const float scale = 1.0f / std::sqrt(float(dk));
  for (std::size_t b = 0; b < batch; ++b) {
    const float* rows = qkv + b * n * ld;
    for (std::size_t h = 0; h < heads; ++h) {
      const ConstMatView qv(rows + shape.q_offset(h), n, dk, ld);
      const ConstMatView kv(rows + shape.k_offset(h), n, dk, ld);
      const ConstMatView vv(rows + shape.v_offset(h), n, dk, ld);
      float* a = att + (b * heads + h) * n * n;
      pack_transposed(kv, scratch.packed_keys);  // Kᵀ [d_k, n]
      matmul_packed(qv, scratch.packed_keys, MatView(a, n, n));
      for (std::size_t i = 0; i < n; ++i) {
        float* row = a + i * n;
        causal_softmax_row(row, shape.first_key(i), i, scale);
        std::fill(row + i + 1, row + n, 0.0f);
      }
      pack_matrix(vv, scratch.packed_rows);  // V [n, d_k]
      matmul_packed(ConstMatView(a, n, n), scratch.packed_rows,
                    MatView(ctx + b * n * ctx_ld + h * dk, n, dk, ctx_ld));
    }
  }
}

void causal_attention_backward(const float* dctx, const float* qkv, const float* att, float* dqkv,
                               std::size_t batch, std::size_t n, const AttentionShape& shape,
                               AttentionScratch& scratch) {
  const std::size_t dk = shape.head_dim, ld = shape.row(), heads = shape.heads;
  const std::size_t ctx_ld = shape.q_width();
  const float scale = 1.0f / std::sqrt(float(dk));
  scratch.grad.resize(n * n);
  scratch.transposed.resize(n * n);
  float* g = scratch.grad.data();
  float* gt = scratch.transposed.data();
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t h = 0; h < heads; ++h) {
      const float* rows = qkv + b * n * ld;
      float* d_rows = dqkv + b * n * ld;
      const ConstMatView qv(rows + shape.q_offset(h), n, dk, ld);
      const ConstMatView kv(rows + shape.k_offset(h), n, dk, ld);
      const ConstMatView vv(rows + shape.v_offset(h), n, dk, ld);
      const MatView dqv(d_rows + shape.q_offset(h), n, dk, ld);
      const MatView dkv(d_rows + shape.k_offset(h), n, dk, ld);
      const MatView dvv(d_rows + shape.v_offset(h), n, dk, ld);
      const ConstMatView a(att + (b * heads + h) * n * n, n, n);
      const ConstMatView dc(dctx + b * n * ctx_ld + h * dk, n, dk, ctx_ld);
      // dA [n, n] = dctx · Vᵀ
      pack_transposed(vv, scratch.packed_keys);
      matmul_packed(dc, scratch.packed_keys, MatView(g, n, n));
      // dV += Aᵀ · dctx
      vec::transpose(a.data, n, n, gt, n);
      pack_matrix(dc, scratch.packed_rows);
      matmul_packed(ConstMatView(gt, n, n), scratch.packed_rows, 0, 0, dvv, nullptr, true);
      // dS = A ⊙ (dA − rowsum(dA ⊙ A)) / √d_k, zero where A is masked (A is zero there)
      for (std::size_t i = 0; i < n; ++i) {
        float* row = g + i * n;
        const float* ar = a.row(i);
        const float dot = vec::dot(row, ar, i + 1);
        for (std::size_t j = 0; j <= i; ++j) row[j] = ar[j] * (row[j] - dot) * scale;
        std::fill(row + i + 1, row + n, 0.0f);
      }
      // dQ += dS · K, dK += dSᵀ · Q
      pack_matrix(kv, scratch.packed_rows);
      matmul_packed(ConstMatView(g, n, n), scratch.packed_rows, 0, 0, dqv, nullptr, true);
      vec::transpose(g, n, n, gt, n);
      pack_matrix(qv, scratch.packed_rows);
      matmul_packed(ConstMatView(gt, n, n), scratch.packed_rows, 0, 0, dkv, nullptr, true);
    }
  }
}

}  // namespace attn
