// Causal multi-head (or grouped-query) attention for the models, batched: per (batch, head) the
// scores Q·Kᵀ/√d_k, the causal (or sliding-window) mask, the softmax and A·V — forward keeping the
// weights A, and the backward through A·V, the softmax (dS = A ⊙ (dA − rowsum(dA ⊙ A))) and Q·Kᵀ.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "attention/ops/attention_shape.hpp"
#include "attention/ops/matmul.hpp"
#include "attention/tensor.hpp"

namespace attn {

namespace reference {

// Query head h's columns in one sequence's rows of a q|k|v buffer (AttentionShape's layout): its
// query, and its group's key and value.
template <class T>
struct HeadColumns {
  T* q;
  T* k;
  T* v;
};
template <class T>
HeadColumns<T> head_columns(T* rows, const AttentionShape& shape, std::size_t h) {
  return {rows + shape.q_offset(h), rows + shape.k_offset(h), rows + shape.v_offset(h)};
}

// qkv [batch·n, shape.row()] (AttentionShape's layout); att [batch, heads, n, n] = softmax over
// the keys query i sees (j ≤ i, and i − window < j with a window) of s_ij = q_i·k_j·scale
// (1/√head_dim unless the shape gives one; soft-capped to cap·tanh(s_ij/cap) when it has a
// softcap), zero elsewhere; ctx [batch·n, heads·head_dim] = A·V, query head h at columns
// h·head_dim. Sums in double.
template <class T>
void causal_attention_forward(const T* qkv, T* att, T* ctx, std::size_t batch, std::size_t n,
                              const AttentionShape& shape) {
  const std::size_t dk = shape.head_dim, ld = shape.row(), heads = shape.heads;
  const std::size_t ctx_ld = shape.q_width();
  const double scale = shape.score_scale();
  std::vector<double> e(n);
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t h = 0; h < heads; ++h) {
      const auto [q, k, v] = head_columns(qkv + b * n * ld, shape, h);
      T* a = att + (b * heads + h) * n * n;
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t first = shape.first_key(i);
        double max = -INFINITY, sum = 0.0;
        for (std::size_t j = first; j <= i; ++j) {
          double dot = 0.0;
          for (std::size_t c = 0; c < dk; ++c) dot += double(q[i * ld + c]) * double(k[j * ld + c]);
          e[j] = dot * scale;
          if (shape.softcap > 0.0) e[j] = shape.softcap * std::tanh(e[j] / shape.softcap);
          max = std::max(max, e[j]);
        }
        for (std::size_t j = first; j <= i; ++j) sum += (e[j] = std::exp(e[j] - max));
        for (std::size_t j = 0; j < n; ++j) {
          a[i * n + j] = j >= first && j <= i ? T(e[j] / sum) : T(0);
        }
        for (std::size_t c = 0; c < dk; ++c) {
          double acc = 0.0;
          for (std::size_t j = first; j <= i; ++j) {
            acc += double(a[i * n + j]) * double(v[j * ld + c]);
          }
          ctx[(b * n + i) * ctx_ld + h * dk + c] = T(acc);
        }
      }
    }
  }
}
template <class T>
void causal_attention_forward(const T* qkv, T* att, T* ctx, std::size_t batch, std::size_t n,
                              std::size_t d, std::size_t heads) {
  causal_attention_forward(qkv, att, ctx, batch, n, AttentionShape::multi_head(d, heads));
}

// Accumulates dqkv [batch·n, shape.row()] += the gradient through the forward above, given
// dctx [batch·n, heads·head_dim] and the forward's qkv and att (a key/value head shared by a
// group of query heads gathers the group's gradients). Scores scaled by 1/√head_dim, not
// soft-capped (a model with either is not trained).
template <class T>
void causal_attention_backward(const T* dctx, const T* qkv, const T* att, T* dqkv,
                               std::size_t batch, std::size_t n, const AttentionShape& shape) {
  const std::size_t dk = shape.head_dim, ld = shape.row(), heads = shape.heads;
  const std::size_t ctx_ld = shape.q_width();
  const double scale = 1.0 / std::sqrt(double(dk));
  std::vector<double> da(n);
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t h = 0; h < heads; ++h) {
      const auto [q, k, v] = head_columns(qkv + b * n * ld, shape, h);
      const auto [dq, dk_, dv] = head_columns(dqkv + b * n * ld, shape, h);
      const T* a = att + (b * heads + h) * n * n;
      const T* dc = dctx + b * n * ctx_ld + h * dk;
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t first = shape.first_key(i);
        double row = 0.0;  // Σ_j dA_ij · A_ij
        for (std::size_t j = first; j <= i; ++j) {
          double dot = 0.0;
          for (std::size_t c = 0; c < dk; ++c) {
            dot += double(dc[i * ctx_ld + c]) * double(v[j * ld + c]);
          }
          da[j] = dot;
          row += dot * double(a[i * n + j]);
          for (std::size_t c = 0; c < dk; ++c) {
            dv[j * ld + c] += T(double(a[i * n + j]) * double(dc[i * ctx_ld + c]));
          }
        }
        for (std::size_t j = first; j <= i; ++j) {
          const double ds = double(a[i * n + j]) * (da[j] - row) * scale;
          for (std::size_t c = 0; c < dk; ++c) {
            dq[i * ld + c] += T(ds * double(k[j * ld + c]));
            dk_[j * ld + c] += T(ds * double(q[i * ld + c]));
          }
        }
      }
    }
  }
}
template <class T>
void causal_attention_backward(const T* dctx, const T* qkv, const T* att, T* dqkv,
                               std::size_t batch, std::size_t n, std::size_t d, std::size_t heads) {
  causal_attention_backward(dctx, qkv, att, dqkv, batch, n, AttentionShape::multi_head(d, heads));
}

}  // namespace reference

// Reusable buffers for the SIMD versions.
struct AttentionScratch {
  PackedMatrix packed_keys;         // Kᵀ or Vᵀ [d_k, n]
  PackedMatrix packed_rows;         // V, dctx, K or Q [n, d_k]
  AlignedVector<float> grad;        // dA, then dS [n, n]
  AlignedVector<float> transposed;  // Aᵀ or dSᵀ [n, n]
};

// One query's scores row [first, last] (the keys it sees) turned into its weights in place: the
// row max subtracted, times `scale`, the core's vectorized exp, divided by the sum; the keys
// before `first` set to 0 (the caller zeroes any past `last`). The full forward and a cached
// decode step share it, so their weights are the same floats.
void causal_softmax_row(float* row, std::size_t first, std::size_t last, float scale);

// A query's scores row [first, last] as Gemma 2 caps them before its softmax: each s·scale
// soft-capped to cap·tanh(s·scale/cap) (softcap.hpp); causal_softmax_row then takes it with
// scale 1.
void softcap_scores_row(float* row, std::size_t first, std::size_t last, float scale, float cap);

// The queries of one sequence's rows at positions position … position + rows − 1 (q [rows, q_ld],
// query head h at columns h·head_dim) over its keys and values 0 … position + rows − 1 (keys,
// values [position + rows, kv_ld], K/V head g at columns g·head_dim): att [heads, rows, keys]
// (keys = position + rows; each row's weights over the keys it sees, zero elsewhere) and ctx
// [rows, ctx_ld] (query head h at columns h·head_dim). The scores are scaled (and soft-capped) as
// the shape says. Each K/V head's keys and values are packed
// once for its group of query heads; a single row's queries of a group go through the products as
// one matrix. More rows split their heads over the thread pool (a thread packs the groups of the
// heads it takes; `scratch` is the calling thread's), each head computed by one thread, so the
// thread count changes no value. A row's values depend only on its position and the keys and values
// it sees, so a model's cached step (one row over the cache) and its full forward (every row at
// once) compute the same floats.
void causal_attention_rows(const float* q, std::size_t q_ld, const float* keys, const float* values,
                           std::size_t kv_ld, std::size_t position, std::size_t rows,
                           const AttentionShape& shape, float* att, float* ctx, std::size_t ctx_ld,
                           AttentionScratch& scratch);

// The same contracts in float: the products on the packed SIMD matmul, the softmax with the
// core's vectorized exp (the forward runs causal_attention_rows on each sequence).
void causal_attention_forward(const float* qkv, float* att, float* ctx, std::size_t batch,
                              std::size_t n, const AttentionShape& shape,
                              AttentionScratch& scratch);
void causal_attention_backward(const float* dctx, const float* qkv, const float* att, float* dqkv,
                               std::size_t batch, std::size_t n, const AttentionShape& shape,
                               AttentionScratch& scratch);
// The small models' layout: qkv [batch·n, 3·d], d_k = d / heads.
inline void causal_attention_forward(const float* qkv, float* att, float* ctx, std::size_t batch,
                                     std::size_t n, std::size_t d, std::size_t heads,
                                     AttentionScratch& scratch) {
  causal_attention_forward(qkv, att, ctx, batch, n, AttentionShape::multi_head(d, heads), scratch);
}
inline void causal_attention_backward(const float* dctx, const float* qkv, const float* att,
                                      float* dqkv, std::size_t batch, std::size_t n, std::size_t d,
                                      std::size_t heads, AttentionScratch& scratch) {
  causal_attention_backward(dctx, qkv, att, dqkv, batch, n, AttentionShape::multi_head(d, heads),
                            scratch);
}

}  // namespace attn
