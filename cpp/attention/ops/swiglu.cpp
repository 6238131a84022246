// SwiGLU's float forward, see swiglu.hpp.
#include "attention/ops/swiglu.hpp"

namespace attn {

void swiglu_forward(const float* gate_up, float* out, std::size_t rows, std::size_t width) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* gate = gate_up + r * 2 * width;
    const float* up = gate + width;
    float* o = out + r * width;
    for (std::size_t i = 0; i < width; ++i) o[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
  }
}

}  // namespace attn
