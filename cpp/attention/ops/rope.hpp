// Rotary position embedding (RoPE): the one angle function and rotation of the core, in both
// conventions a model may use: interleaved pairs (2i, 2i+1) (RoFormer; the walkthrough's layer and
// the small model) and rotate_half pairs (i, i + d_k/2) (Hugging Face's Llama family: q·cos +
// rotate_half(q)·sin with cos/sin = cat(freqs, freqs)). Pair i at position t turns by t·θ_i,
// θ_i = base^(−2i/d_k); cos and sin are computed in double and rounded to T once. Forward on one
// head's [n, d_k] or on a packed qkv buffer, and the backward (the rotation by the negative angle).
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/tensor.hpp"

namespace attn {

enum class RopePairing {
  Interleaved,  // (x_{2i}, x_{2i+1})
  RotateHalf,   // (x_i, x_{i + d_k/2})
};

inline constexpr double kRopeBase = 10000.0;

// θ_i = base^(−2i/d_k), and the angle pos·θ_i.
inline double rope_frequency(std::size_t pair, std::size_t d_k, double base = kRopeBase) {
  return std::pow(base, -2.0 * pair / static_cast<double>(d_k));
}
inline double rope_angle(std::size_t pos, std::size_t pair, std::size_t d_k,
                         double base = kRopeBase) {
  return static_cast<double>(pos) * rope_frequency(pair, d_k, base);
}

// The two columns pair i turns: (2i, 2i+1) or (i, i + d_k/2).
inline std::size_t rope_first(std::size_t pair, RopePairing pairing) {
  return pairing == RopePairing::Interleaved ? 2 * pair : pair;
}
inline std::size_t rope_second(std::size_t pair, std::size_t d_k, RopePairing pairing) {
  return pairing == RopePairing::Interleaved ? 2 * pair + 1 : pair + d_k / 2;
}

// cos and sign·sin of every position's and pair's angle: [n, d_k / 2] each.
template <class T>
struct RopeTables {
  std::vector<T> cos, sin;
  RopeTables(std::size_t n, std::size_t d_k, int sign = 1, double base = kRopeBase)
      : cos(n * (d_k / 2)), sin(n * (d_k / 2)) {
    const std::size_t half = d_k / 2;
    for (std::size_t t = 0; t < n; ++t) {
      for (std::size_t i = 0; i < half; ++i) {
        const double angle = rope_angle(t, i, d_k, base);
        cos[t * half + i] = T(std::cos(angle));
        sin[t * half + i] = T(sign * std::sin(angle));
      }
    }
  }
};

// One head's d_k values at position t, in place, by the tables' row t.
template <class T>
void rope_rotate_head(T* x, std::size_t d_k, const RopeTables<T>& tables, std::size_t t,
                      RopePairing pairing) {
  const std::size_t half = d_k / 2;
  const T* c = tables.cos.data() + t * half;
  const T* s = tables.sin.data() + t * half;
  for (std::size_t i = 0; i < half; ++i) {
    T& a = x[rope_first(i, pairing)];
    T& b = x[rope_second(i, d_k, pairing)];
    const T x0 = a, x1 = b;
    a = x0 * c[i] - x1 * s[i];
    b = x0 * s[i] + x1 * c[i];
  }
}

// In place on x [n, d_k] (d_k even; throws otherwise): row pos turned by pos·θ_i.
inline void apply_rope(MatView x, RopePairing pairing = RopePairing::Interleaved,
                       double base = kRopeBase) {
  if (x.cols % 2 != 0) {
    throw Error("RoPE rotates pairs of dimensions: it needs an even d_k, got " +
                std::to_string(x.cols));
  }
  const RopeTables<float> tables(x.rows, x.cols, 1, base);
  for (std::size_t pos = 0; pos < x.rows; ++pos) {
    rope_rotate_head(x.row(pos), x.cols, tables, pos, pairing);
  }
}

namespace reference {

// In place on qkv [batch·n, 3·d] (q | k | v; head h at columns h·d_k of q and of k), d_k even.
// sign +1 rotates (forward), −1 rotates back (backward: the gradient of a rotation is the
// inverse rotation of the gradient).
template <class T>
void rope_rotate(T* qkv, std::size_t batch, std::size_t n, std::size_t d, std::size_t heads,
                 int sign, RopePairing pairing = RopePairing::Interleaved,
                 double base = kRopeBase) {
  const std::size_t dk = d / heads;
  const RopeTables<T> tables(n, dk, sign, base);
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t t = 0; t < n; ++t) {
      T* row = qkv + (b * n + t) * 3 * d;
      for (std::size_t h = 0; h < 2 * heads; ++h) {  // q's heads, then k's
        rope_rotate_head(row + h * dk, dk, tables, t, pairing);
      }
    }
  }
}

}  // namespace reference

// The float forward and backward (scalar: a pairwise rotation of 2·d values per row is a small
// fraction of a step's work).
inline void rope_forward(float* qkv, std::size_t batch, std::size_t n, std::size_t d,
                         std::size_t heads) {
  reference::rope_rotate(qkv, batch, n, d, heads, +1);
}
inline void rope_backward(float* dqkv, std::size_t batch, std::size_t n, std::size_t d,
                          std::size_t heads) {
  reference::rope_rotate(dqkv, batch, n, d, heads, -1);
}

}  // namespace attn
