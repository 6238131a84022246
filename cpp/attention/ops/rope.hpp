// Rotary position embedding (RoPE) on the queries and keys of a packed qkv buffer, and its
// backward (the same rotation by the negative angle). Pairs (2i, 2i+1) of each head's d_k
// columns at position t turn by t·θ_i, θ_i = 10000^{−2i/d_k}, as ops/positional.hpp's
// apply_rope; cos and sin are computed in double and rounded to T once.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace attn {

namespace reference {

// In place on qkv [batch·n, 3·d] (q | k | v; head h at columns h·d_k of q and of k), d_k even.
// sign +1 rotates (forward), −1 rotates back (backward: the gradient of a rotation is the
// inverse rotation of the gradient).
template <class T>
void rope_rotate(T* qkv, std::size_t batch, std::size_t n, std::size_t d, std::size_t heads,
                 int sign) {
  const std::size_t dk = d / heads, half = dk / 2;
  std::vector<T> cos_table(n * half), sin_table(n * half);  // [n, d_k / 2]
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t i = 0; i < half; ++i) {
      const double angle = double(t) * std::pow(10000.0, -2.0 * double(i) / double(dk));
      cos_table[t * half + i] = T(std::cos(angle));
      sin_table[t * half + i] = T(sign * std::sin(angle));
    }
  }
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t t = 0; t < n; ++t) {
      T* row = qkv + (b * n + t) * 3 * d;
      const T* c = cos_table.data() + t * half;
      const T* s = sin_table.data() + t * half;
      for (std::size_t col = 0; col < 2 * d; col += 2) {  // q and k: 2·d columns, pair by pair
        const std::size_t i = (col % dk) / 2;
        const T x0 = row[col], x1 = row[col + 1];
        row[col] = x0 * c[i] - x1 * s[i];
        row[col + 1] = x0 * s[i] + x1 * c[i];
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
