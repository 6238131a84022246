// LayerNorm forward and backward with SIMD row loops, see layernorm.hpp.
#include "attention/ops/layernorm.hpp"

#include "attention/ops/simd.hpp"
#include "attention/ops/vec.hpp"

namespace attn {

void layernorm_forward(const float* x, const float* weight, const float* bias, float* out,
                       float* mean, float* rstd, std::size_t rows, std::size_t d) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    float* o = out + r * d;
    const float m = vec::sum(xr, d) / float(d);
    // variance as Σ (x − m)², staged through o
    for (std::size_t i = 0; i < d; ++i) o[i] = xr[i] - m;
    const float var = vec::dot(o, o, d) / float(d);
    const float s = 1.0f / std::sqrt(var + float(kLayerNormEps));
    std::size_t i = 0;
#if ATTN_SIMD
    using simd::Floats;
    constexpr std::size_t W = simd::kWidth;
    const Floats sv(s);
    for (; i + W <= d; i += W) {
      const Floats xhat = Floats::load_unaligned(o + i) * sv;
      xsimd::fma(xhat, Floats::load_unaligned(weight + i), Floats::load_unaligned(bias + i))
          .store_unaligned(o + i);
    }
#endif
    for (; i < d; ++i) o[i] = o[i] * s * weight[i] + bias[i];
    mean[r] = m;
    rstd[r] = s;
  }
}

void layernorm_backward(const float* dout, const float* x, const float* weight, const float* mean,
                        const float* rstd, float* dx, float* dweight, float* dbias,
                        std::size_t rows, std::size_t d) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* g_out = dout + r * d;
    const float* xr = x + r * d;
    float* dxr = dx + r * d;
    const float m = mean[r], s = rstd[r];
    float mean_g = 0.0f, mean_gx = 0.0f;
    std::size_t i = 0;
#if ATTN_SIMD
    using simd::Floats;
    constexpr std::size_t W = simd::kWidth;
    const Floats mv(m), sv(s);
    Floats acc_g(0.0f), acc_gx(0.0f);
    for (; i + W <= d; i += W) {
      const Floats xhat = (Floats::load_unaligned(xr + i) - mv) * sv;
      const Floats g = Floats::load_unaligned(g_out + i) * Floats::load_unaligned(weight + i);
      acc_g += g;
      acc_gx = xsimd::fma(g, xhat, acc_gx);
    }
    mean_g = xsimd::reduce_add(acc_g);
    mean_gx = xsimd::reduce_add(acc_gx);
#endif
    for (; i < d; ++i) {
      const float xhat = (xr[i] - m) * s;
      const float g = g_out[i] * weight[i];
      mean_g += g;
      mean_gx += g * xhat;
    }
    mean_g /= float(d);
    mean_gx /= float(d);
    i = 0;
#if ATTN_SIMD
    const Floats mg(mean_g), mgx(mean_gx);
    for (; i + W <= d; i += W) {
      const Floats xhat = (Floats::load_unaligned(xr + i) - mv) * sv;
      const Floats go = Floats::load_unaligned(g_out + i);
      const Floats g = go * Floats::load_unaligned(weight + i);
      const Floats step = sv * (g - mg - xhat * mgx);
      (Floats::load_unaligned(dxr + i) + step).store_unaligned(dxr + i);
      xsimd::fma(go, xhat, Floats::load_unaligned(dweight + i)).store_unaligned(dweight + i);
      (Floats::load_unaligned(dbias + i) + go).store_unaligned(dbias + i);
    }
#endif
    for (; i < d; ++i) {
      const float xhat = (xr[i] - m) * s;
      const float g = g_out[i] * weight[i];
      dxr[i] += s * (g - mean_g - xhat * mean_gx);
      dweight[i] += g_out[i] * xhat;
      dbias[i] += g_out[i];
    }
  }
}

}  // namespace attn
