// GELU, elementwise: the exact erf form (torch.nn.GELU()) or GPT-2's tanh approximation
// (torch.nn.GELU(approximate='tanh')); forward and backward (the backward needs the input).
#pragma once

#include <cmath>
#include <cstddef>
#include <span>
#include <string_view>

#include "attention/option_kinds.hpp"

namespace attn {

namespace reference {

// GELU(x) and its derivative in T.
template <class T>
T gelu(T x, GeluKind kind) {
  if (kind == GeluKind::Erf) return T(0.5) * x * (T(1) + std::erf(x * T(0.7071067811865476)));
  const T u = T(0.7978845608028654) * (x + T(0.044715) * x * x * x);  // √(2/π)·(x + c·x³)
  return T(0.5) * x * (T(1) + std::tanh(u));
}
template <class T>
T gelu_derivative(T x, GeluKind kind) {
  if (kind == GeluKind::Erf) {
    const T pdf = std::exp(T(-0.5) * x * x) * T(0.3989422804014327);  // φ(x) = e^{−x²/2}/√(2π)
    return T(0.5) * (T(1) + std::erf(x * T(0.7071067811865476))) + x * pdf;
  }
  const T u = T(0.7978845608028654) * (x + T(0.044715) * x * x * x);
  const T t = std::tanh(u);
  const T du = T(0.7978845608028654) * (T(1) + T(3 * 0.044715) * x * x);
  return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * du;
}

// out [count] = GELU(x) [count].
template <class T>
void gelu_forward(const T* x, T* out, std::size_t count, GeluKind kind) {
  for (std::size_t i = 0; i < count; ++i) out[i] = gelu(x[i], kind);
}

// Accumulates dx [count] += dout ⊙ GELU'(x).
template <class T>
void gelu_backward(const T* dout, const T* x, T* dx, std::size_t count, GeluKind kind) {
  for (std::size_t i = 0; i < count; ++i) dx[i] += dout[i] * gelu_derivative(x[i], kind);
}

}  // namespace reference

// The same in float with SIMD (xsimd's erf / tanh and the core's exp).
void gelu_forward(const float* x, float* out, std::size_t count, GeluKind kind);
void gelu_backward(const float* dout, const float* x, float* dx, std::size_t count, GeluKind kind);

}  // namespace attn
