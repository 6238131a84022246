// Small SIMD vector loops shared by the training ops: sums, dot products, y += a·x, y *= a.
#pragma once

#include <cstddef>

#include "attention/ops/simd.hpp"

namespace attn::vec {

#if ATTN_SIMD
inline constexpr std::size_t W = simd::kWidth;
#endif

// Σ x[i], x [n].
inline float sum(const float* x, std::size_t n) {
  std::size_t i = 0;
  float total = 0.0f;
#if ATTN_SIMD
  simd::Floats acc(0.0f);
  for (; i + W <= n; i += W) acc += simd::Floats::load_unaligned(x + i);
  total = xsimd::reduce_add(acc);
#endif
  for (; i < n; ++i) total += x[i];
  return total;
}

// Σ a[i]·b[i], a [n], b [n].
inline float dot(const float* a, const float* b, std::size_t n) {
  std::size_t i = 0;
  float total = 0.0f;
#if ATTN_SIMD
  simd::Floats acc(0.0f);
  for (; i + W <= n; i += W) {
    acc = xsimd::fma(simd::Floats::load_unaligned(a + i), simd::Floats::load_unaligned(b + i), acc);
  }
  total = xsimd::reduce_add(acc);
#endif
  for (; i < n; ++i) total += a[i] * b[i];
  return total;
}

// y[i] += alpha·x[i], x [n], y [n].
inline void axpy(float alpha, const float* x, float* y, std::size_t n) {
  std::size_t i = 0;
#if ATTN_SIMD
  const simd::Floats a(alpha);
  for (; i + W <= n; i += W) {
    xsimd::fma(a, simd::Floats::load_unaligned(x + i), simd::Floats::load_unaligned(y + i))
        .store_unaligned(y + i);
  }
#endif
  for (; i < n; ++i) y[i] += alpha * x[i];
}

// y[i] += x[i], x [n], y [n].
inline void add(const float* x, float* y, std::size_t n) {
  std::size_t i = 0;
#if ATTN_SIMD
  for (; i + W <= n; i += W) {
    (simd::Floats::load_unaligned(y + i) + simd::Floats::load_unaligned(x + i))
        .store_unaligned(y + i);
  }
#endif
  for (; i < n; ++i) y[i] += x[i];
}

// x[i] *= alpha, x [n].
inline void scale(float alpha, float* x, std::size_t n) {
  std::size_t i = 0;
#if ATTN_SIMD
  const simd::Floats a(alpha);
  for (; i + W <= n; i += W) (simd::Floats::load_unaligned(x + i) * a).store_unaligned(x + i);
#endif
  for (; i < n; ++i) x[i] *= alpha;
}

}  // namespace attn::vec
