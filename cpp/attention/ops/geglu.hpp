// The gated GELU MLP's gate (GeGLU: Gemma 2 and 3's gelu_pytorch_tanh MLP): GELU(gate) ⊙ up, on
// the rows of the one matmul that computes gate and up side by side, as swiglu.hpp does for SiLU;
// forward only.
#pragma once

#include <cstddef>

#include "attention/ops/gelu.hpp"

namespace attn {

namespace reference {

// out [rows, width] = GELU(gate) ⊙ up, from gate_up [rows, 2·width] (gate | up per row).
template <class T>
void geglu_forward(const T* gate_up, T* out, std::size_t rows, std::size_t width, GeluKind kind) {
  for (std::size_t r = 0; r < rows; ++r) {
    const T* gate = gate_up + r * 2 * width;
    const T* up = gate + width;
    for (std::size_t i = 0; i < width; ++i) {
      out[r * width + i] = T(gelu(double(gate[i]), kind) * double(up[i]));
    }
  }
}

}  // namespace reference

// The same in float: each row's gate through gelu_forward (its SIMD batches from the row's
// start, so a row's values never depend on the rows around it), times up.
void geglu_forward(const float* gate_up, float* out, std::size_t rows, std::size_t width,
                   GeluKind kind);

}  // namespace attn
