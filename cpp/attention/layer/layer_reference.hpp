// The attention layer's scalar reference: a complete multi-head attention forward in
// nn.MultiheadAttention layout, written as directly as possible (double accumulation, no SIMD),
// built from the ops' references; the tests compare AttentionLayer with it.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attention/ops/masks.hpp"
#include "attention/ops/matmul.hpp"
#include "attention/ops/sdpa.hpp"
#include "attention/ops/softmax.hpp"
#include "attention/tensor.hpp"

namespace attn::reference {

// A complete multi-head attention forward in nn.MultiheadAttention layout, written as
// directly as possible: every head, every query, every key, one loop at a time.
struct MhaInputs {
  std::size_t d_model = 0, heads = 1, head_dim = 0;
  std::size_t n = 0, kv_n = 0;
  const float* x = nullptr;                // [n, d_model]
  const float* kv = nullptr;               // [kv_n, d_model]
  const float* in_proj_weight = nullptr;   // [3 * heads * head_dim, d_model]
  const float* in_proj_bias = nullptr;     // [3 * heads * head_dim] or null
  const float* out_proj_weight = nullptr;  // [d_model, heads * head_dim] or null (no W_O)
  const float* out_proj_bias = nullptr;    // [d_model] or null
  const MaskSpec* mask = nullptr;
  bool scale = true;
  const float* alibi_slopes = nullptr;  // [heads] or null
};
struct MhaOutputs {
  std::vector<float> output;     // [n, d_model] (or [n, heads * head_dim] without W_O)
  std::vector<float> attention;  // [heads, n, kv_n]
};

inline MhaOutputs multi_head_attention(const MhaInputs& in) {
  const std::size_t inner = in.heads * in.head_dim;
  auto project = [&](const float* src, std::size_t rows, std::size_t which) {
    std::vector<double> out(rows * inner);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t o = 0; o < inner; ++o) {
        const float* w = in.in_proj_weight + (which * inner + o) * in.d_model;
        double sum = in.in_proj_bias ? in.in_proj_bias[which * inner + o] : 0.0;
        for (std::size_t c = 0; c < in.d_model; ++c) sum += double(src[r * in.d_model + c]) * w[c];
        out[r * inner + o] = sum;
      }
    }
    return out;
  };
  const auto q = project(in.x, in.n, 0);
  const auto k = project(in.kv, in.kv_n, 1);
  const auto v = project(in.kv, in.kv_n, 2);

  MhaOutputs result;
  result.attention.assign(in.heads * in.n * in.kv_n, 0.0f);
  std::vector<double> concat(in.n * inner, 0.0);
  const double scale = in.scale ? 1.0 / std::sqrt(double(in.head_dim)) : 1.0;
  for (std::size_t h = 0; h < in.heads; ++h) {
    for (std::size_t i = 0; i < in.n; ++i) {
      std::vector<double> logits(in.kv_n, -std::numeric_limits<double>::infinity());
      double max = -std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < in.kv_n; ++j) {
        if (in.mask && !is_visible(*in.mask, i, j, in.kv_n)) continue;
        double dot = 0.0;
        for (std::size_t c = 0; c < in.head_dim; ++c) {
          dot += q[i * inner + h * in.head_dim + c] * k[j * inner + h * in.head_dim + c];
        }
        logits[j] = dot * scale;
        if (in.alibi_slopes) logits[j] -= in.alibi_slopes[h] * std::abs(double(i) - double(j));
        max = std::max(max, logits[j]);
      }
      if (max == -std::numeric_limits<double>::infinity()) continue;  // no visible key: zeros
      double sum = 0.0;
      for (std::size_t j = 0; j < in.kv_n; ++j) sum += std::exp(logits[j] - max);
      for (std::size_t j = 0; j < in.kv_n; ++j) {
        const double a = std::exp(logits[j] - max) / sum;
        result.attention[(h * in.n + i) * in.kv_n + j] = static_cast<float>(a);
        for (std::size_t c = 0; c < in.head_dim; ++c) {
          concat[i * inner + h * in.head_dim + c] += a * v[j * inner + h * in.head_dim + c];
        }
      }
    }
  }
  if (!in.out_proj_weight) {
    result.output.assign(concat.begin(), concat.end());
    return result;
  }
  result.output.assign(in.n * in.d_model, 0.0f);
  for (std::size_t i = 0; i < in.n; ++i) {
    for (std::size_t o = 0; o < in.d_model; ++o) {
      double sum = in.out_proj_bias ? in.out_proj_bias[o] : 0.0;
      for (std::size_t c = 0; c < inner; ++c) {
        sum += concat[i * inner + c] * in.out_proj_weight[o * inner + c];
      }
      result.output[i * in.d_model + o] = static_cast<float>(sum);
    }
  }
  return result;
}

}  // namespace attn::reference
