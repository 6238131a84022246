// RMSNorm over each row (the Llama family's norm, transformers' LlamaRMSNorm): out = x ·
// rsqrt(mean(x²) + ε) ⊙ weight, no mean subtracted and no bias; forward only (a loaded
// checkpoint is not trained).
#pragma once

#include <cmath>
#include <cstddef>

namespace attn {

namespace reference {

// out [rows, d] = x [rows, d] · 1/sqrt(mean(x²) + eps) ⊙ weight [d]. Sums in double.
template <class T>
void rmsnorm_forward(const T* x, const T* weight, T* out, std::size_t rows, std::size_t d,
                     double eps) {
  for (std::size_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    double squares = 0.0;
    for (std::size_t i = 0; i < d; ++i) squares += double(xr[i]) * double(xr[i]);
    const double s = 1.0 / std::sqrt(squares / double(d) + eps);
    for (std::size_t i = 0; i < d; ++i) out[r * d + i] = T(double(xr[i]) * s * double(weight[i]));
  }
}

}  // namespace reference

// The same in float (as transformers computes it in float32: the mean of squares, its rsqrt,
// then x·rsqrt and the weight).
void rmsnorm_forward(const float* x, const float* weight, float* out, std::size_t rows,
                     std::size_t d, float eps);

}  // namespace attn
