// The attention layer's scalar references: a complete multi-head attention forward in
// nn.MultiheadAttention layout, written as directly as possible (double accumulation, no SIMD),
// built from the ops' references; and a Llama-family block's grouped-query attention with its
// RoPE, written on its own from explicit loops. The tests compare AttentionLayer with them.
#pragma once

#include <algorithm>
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

namespace attn::reference {

// Grouped-query attention as a Llama-family block computes it, written independently of the
// layer and of ops/rope.hpp (explicit loops, double throughout): self-attention over x,
// in_proj_weight [(heads + 2·kv_heads)·head_dim, d_model] holding W_q, W_k, W_v row blocks;
// query head h reads key/value head h / (heads / kv_heads); q and k rotated per head (rotate_half
// pairs (i, i + d_k/2) or interleaved pairs (2i, 2i+1)) by t·θ_i, θ_i = base^(−2i/d_k) or the
// given frequencies; causal or a sliding window (query i sees keys i − window < j ≤ i) or nothing;
// scores/√head_dim; softmax; A·V; out_proj.
struct GqaInputs {
  std::size_t d_model = 0, heads = 1, kv_heads = 1, head_dim = 0, n = 0;
  const float* x = nullptr;                // [n, d_model]
  const float* in_proj_weight = nullptr;   // [(heads + 2·kv_heads)·head_dim, d_model]
  const float* in_proj_bias = nullptr;     // [(heads + 2·kv_heads)·head_dim] or null
  const float* out_proj_weight = nullptr;  // [d_model, heads·head_dim] or null (no W_O)
  const float* out_proj_bias = nullptr;    // [d_model] or null
  bool rope = false;
  bool rotate_half = false;  // else interleaved pairs
  double base = 10000.0;
  const double* frequencies = nullptr;  // [head_dim / 2] or null (the base's)
  bool causal = false;
  std::size_t window = 0;  // > 0: sliding window (with causal)
};
struct GqaOutputs {
  std::vector<double> q;         // [n, heads·head_dim], rotated with RoPE
  std::vector<double> k, v;      // [n, kv_heads·head_dim], k rotated with RoPE
  std::vector<double> scores;    // [heads, n, n] q_i·k_j of the head's K/V head (every cell)
  std::vector<float> attention;  // [heads, n, n]
  std::vector<float> output;     // [n, d_model] (or [n, heads·head_dim] without W_O)
};

inline GqaOutputs gqa_attention(const GqaInputs& in) {
  const std::size_t n = in.n, d = in.d_model, dk = in.head_dim;
  const std::size_t q_width = in.heads * dk, kv_width = in.kv_heads * dk;
  GqaOutputs out;
  out.q.assign(n * q_width, 0.0);
  out.k.assign(n * kv_width, 0.0);
  out.v.assign(n * kv_width, 0.0);
  // Projections: row o of in_proj_weight makes column o of q (o < q_width), of k (the next
  // kv_width rows) or of v (the last kv_width).
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t o = 0; o < q_width + 2 * kv_width; ++o) {
      double sum = in.in_proj_bias ? double(in.in_proj_bias[o]) : 0.0;
      for (std::size_t c = 0; c < d; ++c) {
        sum += double(in.x[t * d + c]) * double(in.in_proj_weight[o * d + c]);
      }
      if (o < q_width) {
        out.q[t * q_width + o] = sum;
      } else if (o < q_width + kv_width) {
        out.k[t * kv_width + (o - q_width)] = sum;
      } else {
        out.v[t * kv_width + (o - q_width - kv_width)] = sum;
      }
    }
  }
  if (in.rope) {
    const std::size_t half = dk / 2;
    auto rotate = [&](double* head, std::size_t t) {
      for (std::size_t i = 0; i < half; ++i) {
        const double theta =
            in.frequencies ? in.frequencies[i] : std::pow(in.base, -2.0 * double(i) / double(dk));
        const double angle = double(t) * theta;
        const std::size_t a = in.rotate_half ? i : 2 * i;
        const std::size_t b = in.rotate_half ? i + half : 2 * i + 1;
        const double x0 = head[a], x1 = head[b];
        head[a] = x0 * std::cos(angle) - x1 * std::sin(angle);
        head[b] = x1 * std::cos(angle) + x0 * std::sin(angle);
      }
    };
    for (std::size_t t = 0; t < n; ++t) {
      for (std::size_t h = 0; h < in.heads; ++h) rotate(&out.q[t * q_width + h * dk], t);
      for (std::size_t g = 0; g < in.kv_heads; ++g) rotate(&out.k[t * kv_width + g * dk], t);
    }
  }
  const std::size_t group = in.heads / in.kv_heads;
  const double scale = 1.0 / std::sqrt(double(dk));
  out.scores.assign(in.heads * n * n, 0.0);
  out.attention.assign(in.heads * n * n, 0.0f);
  std::vector<double> concat(n * q_width, 0.0);
  for (std::size_t h = 0; h < in.heads; ++h) {
    const std::size_t g = h / group;
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<double> e(n, 0.0);
      std::vector<bool> seen(n, false);
      double max = -std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < n; ++j) {
        double dot = 0.0;
        for (std::size_t c = 0; c < dk; ++c) {
          dot += out.q[i * q_width + h * dk + c] * out.k[j * kv_width + g * dk + c];
        }
        out.scores[(h * n + i) * n + j] = dot;
        const bool causal_ok = !in.causal || j <= i;
        const bool window_ok = in.window == 0 || double(j) > double(i) - double(in.window);
        seen[j] = causal_ok && window_ok;
        if (seen[j]) max = std::max(max, dot * scale);
      }
      double total = 0.0;
      for (std::size_t j = 0; j < n; ++j) {
        if (seen[j]) total += e[j] = std::exp(out.scores[(h * n + i) * n + j] * scale - max);
      }
      for (std::size_t j = 0; j < n; ++j) {
        const double a = seen[j] ? e[j] / total : 0.0;
        out.attention[(h * n + i) * n + j] = float(a);
        for (std::size_t c = 0; c < dk; ++c) {
          concat[i * q_width + h * dk + c] += a * out.v[j * kv_width + g * dk + c];
        }
      }
    }
  }
  if (!in.out_proj_weight) {
    out.output.assign(concat.begin(), concat.end());
    return out;
  }
  out.output.assign(n * d, 0.0f);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t o = 0; o < d; ++o) {
      double sum = in.out_proj_bias ? double(in.out_proj_bias[o]) : 0.0;
      for (std::size_t c = 0; c < q_width; ++c) {
        sum += concat[i * q_width + c] * double(in.out_proj_weight[o * q_width + c]);
      }
      out.output[i * d + o] = float(sum);
    }
  }
  return out;
}

}  // namespace attn::reference
