// GELU forward and backward with xsimd batches, see gelu.hpp.
#include "attention/ops/gelu.hpp"

#include "attention/ops/exp.hpp"
#include "attention/ops/simd.hpp"

namespace attn {

#if ATTN_SIMD
namespace {
using simd::Floats;
constexpr std::size_t W = simd::kWidth;
const float kSqrtHalf = 0.7071067811865476f;  // 1/√2
const float kSqrt2OverPi = 0.7978845608028654f;
const float kCubic = 0.044715f;

Floats tanh_arg(Floats x) {
  return Floats(kSqrt2OverPi) * xsimd::fma(Floats(kCubic) * x * x, x, x);
}
}  // namespace
#endif

void gelu_forward(const float* x, float* out, std::size_t count, GeluKind kind) {
  std::size_t i = 0;
#if ATTN_SIMD
  const Floats half(0.5f), one(1.0f);
  for (; i + W <= count; i += W) {
    const Floats v = Floats::load_unaligned(x + i);
    const Floats inner =
        kind == GeluKind::Erf ? xsimd::erf(v * Floats(kSqrtHalf)) : xsimd::tanh(tanh_arg(v));
    (half * v * (one + inner)).store_unaligned(out + i);
  }
#endif
  for (; i < count; ++i) out[i] = reference::gelu(x[i], kind);
}

void gelu_backward(const float* dout, const float* x, float* dx, std::size_t count, GeluKind kind) {
  std::size_t i = 0;
#if ATTN_SIMD
  const Floats half(0.5f), one(1.0f);
  for (; i + W <= count; i += W) {
    const Floats v = Floats::load_unaligned(x + i);
    Floats derivative;
    if (kind == GeluKind::Erf) {
      const Floats pdf = exp_batch(Floats(-0.5f) * v * v) * Floats(0.3989422804014327f);
      derivative = xsimd::fma(half, one + xsimd::erf(v * Floats(kSqrtHalf)), v * pdf);
    } else {
      const Floats t = xsimd::tanh(tanh_arg(v));
      const Floats du = Floats(kSqrt2OverPi) * xsimd::fma(Floats(3 * kCubic), v * v, one);
      derivative = half * (one + t) + half * v * (one - t * t) * du;
    }
    xsimd::fma(Floats::load_unaligned(dout + i), derivative, Floats::load_unaligned(dx + i))
        .store_unaligned(dx + i);
  }
#endif
  for (; i < count; ++i) dx[i] += dout[i] * reference::gelu_derivative(x[i], kind);
}

}  // namespace attn
