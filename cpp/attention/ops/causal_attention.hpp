// Causal multi-head attention for training, batched: per (batch, head) the scores Q·Kᵀ/√d_k,
// the causal mask, the softmax and A·V — forward keeping the weights A, and the backward
// through A·V, the softmax (dS = A ⊙ (dA − rowsum(dA ⊙ A))) and Q·Kᵀ.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "attention/ops/matmul.hpp"
#include "attention/tensor.hpp"

namespace attn {

namespace reference {

// qkv [batch·n, 3·d] (q | k | v; head h at columns h·d_k of each, d_k = d / heads);
// att [batch, heads, n, n] = softmax over j ≤ i of q_i·k_j/√d_k (zero for j > i);
// ctx [batch·n, d] = A·V, head h at columns h·d_k. Sums in double.
template <class T>
void causal_attention_forward(const T* qkv, T* att, T* ctx, std::size_t batch, std::size_t n,
                              std::size_t d, std::size_t heads) {
  const std::size_t dk = d / heads, ld = 3 * d;
  const double scale = 1.0 / std::sqrt(double(dk));
  std::vector<double> e(n);
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t h = 0; h < heads; ++h) {
      const T* q = qkv + b * n * ld + h * dk;
      const T* k = q + d;
      const T* v = q + 2 * d;
      T* a = att + (b * heads + h) * n * n;
      for (std::size_t i = 0; i < n; ++i) {
        double max = -INFINITY, sum = 0.0;
        for (std::size_t j = 0; j <= i; ++j) {
          double dot = 0.0;
          for (std::size_t c = 0; c < dk; ++c) dot += double(q[i * ld + c]) * double(k[j * ld + c]);
          e[j] = dot * scale;
          max = std::max(max, e[j]);
        }
        for (std::size_t j = 0; j <= i; ++j) sum += (e[j] = std::exp(e[j] - max));
        for (std::size_t j = 0; j < n; ++j) a[i * n + j] = j <= i ? T(e[j] / sum) : T(0);
        for (std::size_t c = 0; c < dk; ++c) {
          double acc = 0.0;
          for (std::size_t j = 0; j <= i; ++j) acc += double(a[i * n + j]) * double(v[j * ld + c]);
          ctx[(b * n + i) * d + h * dk + c] = T(acc);
        }
      }
    }
  }
}

// Accumulates dqkv [batch·n, 3·d] += the gradient through the forward above, given
// dctx [batch·n, d] and the forward's qkv and att.
template <class T>
void causal_attention_backward(const T* dctx, const T* qkv, const T* att, T* dqkv,
                               std::size_t batch, std::size_t n, std::size_t d, std::size_t heads) {
  const std::size_t dk = d / heads, ld = 3 * d;
  const double scale = 1.0 / std::sqrt(double(dk));
  std::vector<double> da(n);
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t h = 0; h < heads; ++h) {
      const T* q = qkv + b * n * ld + h * dk;
      const T* k = q + d;
      const T* v = q + 2 * d;
      T* dq = dqkv + b * n * ld + h * dk;
      T* dk_ = dq + d;
      T* dv = dq + 2 * d;
      const T* a = att + (b * heads + h) * n * n;
      const T* dc = dctx + b * n * d + h * dk;
      for (std::size_t i = 0; i < n; ++i) {
        double row = 0.0;  // Σ_j dA_ij · A_ij
        for (std::size_t j = 0; j <= i; ++j) {
          double dot = 0.0;
          for (std::size_t c = 0; c < dk; ++c) dot += double(dc[i * d + c]) * double(v[j * ld + c]);
          da[j] = dot;
          row += dot * double(a[i * n + j]);
          for (std::size_t c = 0; c < dk; ++c) {
            dv[j * ld + c] += T(double(a[i * n + j]) * double(dc[i * d + c]));
          }
        }
        for (std::size_t j = 0; j <= i; ++j) {
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

}  // namespace reference

// Reusable buffers for the SIMD versions.
struct AttentionScratch {
  PackedMatrix packed_keys;         // Kᵀ or Vᵀ [d_k, n]
  PackedMatrix packed_rows;         // V, dctx, K or Q [n, d_k]
  AlignedVector<float> grad;        // dA, then dS [n, n]
  AlignedVector<float> transposed;  // Aᵀ or dSᵀ [n, n]
};

// The same contracts in float: the products on the packed SIMD matmul, the softmax with the
// core's vectorized exp.
void causal_attention_forward(const float* qkv, float* att, float* ctx, std::size_t batch,
                              std::size_t n, std::size_t d, std::size_t heads,
                              AttentionScratch& scratch);
void causal_attention_backward(const float* dctx, const float* qkv, const float* att, float* dqkv,
                               std::size_t batch, std::size_t n, std::size_t d, std::size_t heads,
                               AttentionScratch& scratch);

}  // namespace attn
