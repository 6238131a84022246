// The model's input: x = embed[ids] + pos[t] (a learned table or the fixed sinusoidal one, or
// none), forward and backward (a scatter-add into the rows the ids selected).
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn {

namespace reference {

// out [batch·n, d] = embed[ids[b·n + t]] + pos[t];  embed [vocab, d], pos [n, d] or nullptr.
// ids must be < vocab (the model checks them).
template <class T>
void input_embedding_forward(const std::int32_t* ids, const T* embed, const T* pos, T* out,
                             std::size_t batch, std::size_t n, std::size_t d) {
  for (std::size_t r = 0; r < batch * n; ++r) {
    const T* e = embed + std::size_t(ids[r]) * d;
    const T* p = pos ? pos + (r % n) * d : nullptr;
    for (std::size_t c = 0; c < d; ++c) out[r * d + c] = p ? e[c] + p[c] : e[c];
  }
}

// Accumulates dembed [vocab, d] rows ids[r] += dout[r], and dpos [n, d] (a learned table; or
// nullptr) row t += Σ_b dout[b·n + t].  dout [batch·n, d].
template <class T>
void input_embedding_backward(const T* dout, const std::int32_t* ids, T* dembed, T* dpos,
                              std::size_t batch, std::size_t n, std::size_t d) {
  for (std::size_t r = 0; r < batch * n; ++r) {
    T* de = dembed + std::size_t(ids[r]) * d;
    for (std::size_t c = 0; c < d; ++c) de[c] += dout[r * d + c];
    if (dpos) {
      for (std::size_t c = 0; c < d; ++c) dpos[(r % n) * d + c] += dout[r * d + c];
    }
  }
}

}  // namespace reference

// The same contracts in float with SIMD row loops.
void input_embedding_forward(const std::int32_t* ids, const float* embed, const float* pos,
                             float* out, std::size_t batch, std::size_t n, std::size_t d);
void input_embedding_backward(const float* dout, const std::int32_t* ids, float* dembed,
                              float* dpos, std::size_t batch, std::size_t n, std::size_t d);

}  // namespace attn
