// Causal multi-head attention forward and backward on the SIMD matmul, see causal_attention.hpp.
#include "attention/ops/causal_attention.hpp"

#include <algorithm>

#include "attention/ops/exp.hpp"
#include "attention/ops/vec.hpp"

namespace attn {

void causal_attention_forward(const float* qkv, float* att, float* ctx, std::size_t batch,
                              std::size_t n, std::size_t d, std::size_t heads,
                              AttentionScratch& scratch) {
  const std::size_t dk = d / heads, ld = 3 * d;
  const float scale = 1.0f / std::sqrt(float(dk));
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t h = 0; h < heads; ++h) {
      const float* q = qkv + b * n * ld + h * dk;
      const ConstMatView qv(q, n, dk, ld), kv(q + d, n, dk, ld), vv(q + 2 * d, n, dk, ld);
      float* a = att + (b * heads + h) * n * n;
      pack_transposed(kv, scratch.packed_keys);  // Kᵀ [d_k, n]
      matmul_packed(qv, scratch.packed_keys, MatView(a, n, n));
      for (std::size_t i = 0; i < n; ++i) {
        float* row = a + i * n;
        float max = row[0];
        for (std::size_t j = 1; j <= i; ++j) max = std::max(max, row[j]);
        for (std::size_t j = 0; j <= i; ++j) row[j] = (row[j] - max) * scale;
        exp_values(row, row, i + 1);
        vec::scale(1.0f / vec::sum(row, i + 1), row, i + 1);
        std::fill(row + i + 1, row + n, 0.0f);
      }
      pack_matrix(vv, scratch.packed_rows);  // V [n, d_k]
      matmul_packed(ConstMatView(a, n, n), scratch.packed_rows,
                    MatView(ctx + b * n * d + h * dk, n, dk, d));
    }
  }
}

void causal_attention_backward(const float* dctx, const float* qkv, const float* att, float* dqkv,
                               std::size_t batch, std::size_t n, std::size_t d, std::size_t heads,
                               AttentionScratch& scratch) {
  const std::size_t dk = d / heads, ld = 3 * d;
  const float scale = 1.0f / std::sqrt(float(dk));
  scratch.grad.resize(n * n);
  scratch.transposed.resize(n * n);
  float* g = scratch.grad.data();
  float* gt = scratch.transposed.data();
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t h = 0; h < heads; ++h) {
      const float* q = qkv + b * n * ld + h * dk;
      const ConstMatView qv(q, n, dk, ld), kv(q + d, n, dk, ld), vv(q + 2 * d, n, dk, ld);
      float* dq = dqkv + b * n * ld + h * dk;
      const MatView dqv(dq, n, dk, ld), dkv(dq + d, n, dk, ld), dvv(dq + 2 * d, n, dk, ld);
      const ConstMatView a(att + (b * heads + h) * n * n, n, n);
      const ConstMatView dc(dctx + b * n * d + h * dk, n, dk, d);
      // dA [n, n] = dctx · Vᵀ
      pack_transposed(vv, scratch.packed_keys);
      matmul_packed(dc, scratch.packed_keys, MatView(g, n, n));
      // dV += Aᵀ · dctx
      vec::transpose(a.data, n, n, gt, n);
      pack_matrix(dc, scratch.packed_rows);
      matmul_packed(ConstMatView(gt, n, n), scratch.packed_rows, 0, 0, dvv, nullptr, true);
      // dS = A ⊙ (dA − rowsum(dA ⊙ A)) / √d_k, zero above the diagonal (A is zero there)
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
