// LayerNorm over each row (ε = 1e-5, biased variance, as torch.nn.LayerNorm): forward keeping
// each row's mean and 1/σ for the backward, and the backward (llm.c style).
#pragma once

#include <cmath>
#include <cstddef>

namespace attn {

inline constexpr double kLayerNormEps = 1e-5;

namespace reference {

// out [rows, d] = (x − mean)·rstd ⊙ weight + bias;  x [rows, d], weight [d], bias [d];
// mean [rows], rstd [rows] = 1 / sqrt(var + ε) are kept for the backward. Sums in double.
template <class T>
void layernorm_forward(const T* x, const T* weight, const T* bias, T* out, T* mean, T* rstd,
                       std::size_t rows, std::size_t d) {
  for (std::size_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    double m = 0.0;
    for (std::size_t i = 0; i < d; ++i) m += double(xr[i]);
    m /= double(d);
    double v = 0.0;
    for (std::size_t i = 0; i < d; ++i) v += (double(xr[i]) - m) * (double(xr[i]) - m);
    v /= double(d);
    const double s = 1.0 / std::sqrt(v + kLayerNormEps);
    for (std::size_t i = 0; i < d; ++i) {
      out[r * d + i] = T((double(xr[i]) - m) * s * double(weight[i]) + double(bias[i]));
    }
    mean[r] = T(m);
    rstd[r] = T(s);
  }
}

// Accumulates: dx [rows, d] += ∂L/∂x, dweight [d] += Σ_r dout ⊙ x̂, dbias [d] += Σ_r dout,
// with x̂ = (x − mean)·rstd and dx = rstd·(g − mean(g) − x̂·mean(g ⊙ x̂)), g = dout ⊙ weight.
template <class T>
void layernorm_backward(const T* dout, const T* x, const T* weight, const T* mean, const T* rstd,
                        T* dx, T* dweight, T* dbias, std::size_t rows, std::size_t d) {
  for (std::size_t r = 0; r < rows; ++r) {
    const T* g_out = dout + r * d;
    const T* xr = x + r * d;
    double mean_g = 0.0, mean_gx = 0.0;
    for (std::size_t i = 0; i < d; ++i) {
      const double xhat = (double(xr[i]) - double(mean[r])) * double(rstd[r]);
      const double g = double(g_out[i]) * double(weight[i]);
      mean_g += g;
      mean_gx += g * xhat;
    }
    mean_g /= double(d);
    mean_gx /= double(d);
    for (std::size_t i = 0; i < d; ++i) {
      const double xhat = (double(xr[i]) - double(mean[r])) * double(rstd[r]);
      const double g = double(g_out[i]) * double(weight[i]);
      dx[r * d + i] += T(double(rstd[r]) * (g - mean_g - xhat * mean_gx));
      dweight[i] += T(double(g_out[i]) * xhat);
      dbias[i] += g_out[i];
    }
  }
}

}  // namespace reference

// The same contracts in float with SIMD (xsimd) loops.
void layernorm_forward(const float* x, const float* weight, const float* bias, float* out,
                       float* mean, float* rstd, std::size_t rows, std::size_t d);
void layernorm_backward(const float* dout, const float* x, const float* weight, const float* mean,
                        const float* rstd, float* dx, float* dweight, float* dbias,
                        std::size_t rows, std::size_t d);

}  // namespace attn
