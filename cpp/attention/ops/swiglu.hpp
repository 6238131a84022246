// SwiGLU, the Llama family's MLP gate: silu(gate) ⊙ up, silu(x) = x · σ(x), on the rows of the
// one matmul that computes gate and up side by side; forward only.
#pragma once

#include <cmath>
#include <cstddef>

namespace attn {

namespace reference {

// out [rows, width] = silu(gate) ⊙ up, from gate_up [rows, 2·width] (gate | up per row).
template <class T>
void swiglu_forward(const T* gate_up, T* out, std::size_t rows, std::size_t width) {
  for (std::size_t r = 0; r < rows; ++r) {
    const T* gate = gate_up + r * 2 * width;
    const T* up = gate + width;
    for (std::size_t i = 0; i < width; ++i) {
      const double g = double(gate[i]);
      out[r * width + i] = T(g / (1.0 + std::exp(-g)) * double(up[i]));
    }
  }
}

}  // namespace reference

// The same in float.
void swiglu_forward(const float* gate_up, float* out, std::size_t rows, std::size_t width);

}  // namespace attn
