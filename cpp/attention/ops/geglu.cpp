// GeGLU's float forward, see geglu.hpp.
#include "attention/ops/geglu.hpp"

namespace attn {

void geglu_forward(const float* gate_up, float* out, std::size_t rows, std::size_t width,
                   GeluKind kind) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* gate = gate_up + r * 2 * width;
    const float* up = gate + width;
    float* o = out + r * width;
    gelu_forward(gate, o, width, kind);
    for (std::size_t i = 0; i < width; ++i) o[i] *= up[i];
  }
}

}  // namespace attn
