// Token + positional embedding forward and backward, see input_embedding.hpp.
#include "attention/ops/input_embedding.hpp"

#include <algorithm>

#include "attention/ops/vec.hpp"

namespace attn {

void input_embedding_forward(const std::int32_t* ids, const float* embed, const float* pos,
                             float* out, std::size_t batch, std::size_t n, std::size_t d) {
  for (std::size_t r = 0; r < batch * n; ++r) {
    const float* e = embed + std::size_t(ids[r]) * d;
    std::copy(e, e + d, out + r * d);
    if (pos) vec::add(pos + (r % n) * d, out + r * d, d);
  }
}

void input_embedding_backward(const float* dout, const std::int32_t* ids, float* dembed,
                              float* dpos, std::size_t batch, std::size_t n, std::size_t d) {
  for (std::size_t r = 0; r < batch * n; ++r) {
    vec::add(dout + r * d, dembed + std::size_t(ids[r]) * d, d);
    if (dpos) vec::add(dout + r * d, dpos + (r % n) * d, d);
  }
}

}  // namespace attn
