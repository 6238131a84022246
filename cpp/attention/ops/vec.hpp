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

// out [cols, rows] (row stride ld >= rows) = inᵀ, in [rows, cols] (dense): W × W blocks
// transposed in registers. For a tall input keep ld off powers of two: W stores ld floats
// apart would otherwise share one L1 set (padded_stride gives such an ld).
inline void transpose(const float* in, std::size_t rows, std::size_t cols, float* out,
                      std::size_t ld) {
  std::size_t r0 = 0;
#if ATTN_SIMD
  for (; r0 + W <= rows; r0 += W) {
    std::size_t c0 = 0;
    for (; c0 + W <= cols; c0 += W) {
      simd::Floats block[W];
      for (std::size_t i = 0; i < W; ++i) {
        block[i] = simd::Floats::load_unaligned(in + (r0 + i) * cols + c0);
      }
      simd::transpose(block);
      for (std::size_t i = 0; i < W; ++i) block[i].store_unaligned(out + (c0 + i) * ld + r0);
    }
    for (std::size_t r = r0; r < r0 + W; ++r) {
      for (std::size_t c = c0; c < cols; ++c) out[c * ld + r] = in[r * cols + c];
    }
  }
#endif
  for (std::size_t r = r0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) out[c * ld + r] = in[r * cols + c];
  }
}

// rows rounded up to a multiple of 16 floats (64 bytes), plus 16 when that is a multiple of
// 256 floats (1 KB): a row stride for transpose's output without cache-set aliasing.
inline std::size_t padded_stride(std::size_t rows) {
  const std::size_t ld = (rows + 15) / 16 * 16;
  return ld % 256 == 0 ? ld + 16 : ld;
}

}  // namespace attn::vec
