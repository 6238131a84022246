// Causal multi-head attention forward and backward on the SIMD matmul, see causal_attention.hpp.
#include "attention/ops/causal_attention.hpp"

#include <algorithm>

#include "attention/ops/exp.hpp"
#include "attention/ops/softcap.hpp"
#include "attention/ops/vec.hpp"
#include "attention/parallel.hpp"

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

void softcap_scores_row(float* row, std::size_t first, std::size_t last, float scale, float cap) {
  float* seen = row + first;
  const std::size_t count = last + 1 - first;
  for (std::size_t j = 0; j < count; ++j) seen[j] *= scale;
  softcap_forward(seen, count, cap);
}

void causal_attention_rows(const float* q, std::size_t q_ld, const float* keys, const float* values,
                           std::size_t kv_ld, std::size_t position, std::size_t rows,
                           const AttentionShape& shape, float* att, float* ctx, std::size_t ctx_ld,
                           AttentionScratch& scratch) {
  const std::size_t dk = shape.head_dim, len = position + rows;
  const std::size_t group = shape.heads / shape.kv_heads;
  const float scale = shape.scale != 0.0 ? float(shape.scale) : 1.0f / std::sqrt(float(dk));
  const float softcap = float(shape.softcap);
  // The keys any of the rows sees: first … len − 1.
  const std::size_t first = shape.first_key(position), count = len - first;
  // Head h's rows of scores [rows, len] turned into weights in place.
  const auto softmax_rows = [&](std::size_t h) {
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t at = position + r;
      float* row = att + (h * rows + r) * len;
      if (softcap > 0.0f) {  // scaled and capped first; the softmax then takes them as they are
        softcap_scores_row(row, shape.first_key(at), at, scale, softcap);
        causal_softmax_row(row, shape.first_key(at), at, 1.0f);
      } else {
        causal_softmax_row(row, shape.first_key(at), at, scale);
      }
      std::fill(row + at + 1, row + len, 0.0f);
    }
  };
  // Kᵀ [d_k, count] and V [count, d_k] of KV group g into s.
  const auto pack_group = [&](std::size_t g, AttentionScratch& s) {
    pack_transposed(ConstMatView(keys + first * kv_ld + g * dk, count, dk, kv_ld), s.packed_keys);
    pack_matrix(ConstMatView(values + first * kv_ld + g * dk, count, dk, kv_ld), s.packed_rows);
  };
  if (rows == 1) {  // a group's queries of one row are contiguous: one [group, d_k] matrix each
    for (std::size_t g = 0; g < shape.kv_heads; ++g) {
      const std::size_t head0 = g * group;
      pack_group(g, scratch);
      matmul_packed(ConstMatView(q + shape.q_offset(head0), group, dk, dk), scratch.packed_keys,
                    MatView(att + head0 * len + first, group, count, len));
      for (std::size_t h = head0; h < head0 + group; ++h) softmax_rows(h);
      matmul_packed(ConstMatView(att + head0 * len + first, group, count, len), scratch.packed_rows,
                    MatView(ctx + head0 * dk, group, dk, dk));
    }
    return;
  }
  // More rows: the heads split over the thread pool (a thread takes at least
  // kParallelMultiplyAdds of QKᵀ and A·V), each head computed by one thread in one order, so the
  // thread count never changes a bit. A thread packs its heads' group's keys and values once per
  // group it enters; the calling thread uses `scratch`, a worker its own.
  const std::size_t head_work = 2 * rows * count * dk + 1;
  parallel_for(shape.heads, kParallelMultiplyAdds / head_work + 1,
               [&](std::size_t begin, std::size_t end) {
                 thread_local AttentionScratch worker_scratch;
                 AttentionScratch& s = begin == 0 ? scratch : worker_scratch;
                 for (std::size_t h = begin; h < end; ++h) {
                   if (h == begin || h % group == 0) pack_group(h / group, s);
                   matmul_packed(ConstMatView(q + shape.q_offset(h), rows, dk, q_ld), s.packed_keys,
                                 MatView(att + h * rows * len + first, rows, count, len));
                   softmax_rows(h);
                   matmul_packed(ConstMatView(att + h * rows * len + first, rows, count, len),
                                 s.packed_rows, MatView(ctx + h * dk, rows, dk, ctx_ld));
                 }
               });
}

void causal_attention_forward(const float* qkv, float* att, float* ctx, std::size_t batch,
                              std::size_t n, const AttentionShape& shape,
                              AttentionScratch& scratch) {
  const std::size_t ld = shape.row(), q_width = shape.q_width(), kv_width = shape.kv_width();
  for (std::size_t b = 0; b < batch; ++b) {
    const float* rows = qkv + b * n * ld;
    causal_attention_rows(rows, ld, rows + q_width, rows + q_width + kv_width, ld, 0, n, shape,
                          att + b * shape.heads * n * n, ctx + b * n * q_width, q_width, scratch);
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
