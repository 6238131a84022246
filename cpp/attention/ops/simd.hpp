// The one place that picks the SIMD batch type: xsimd's best float batch for the target
// (wasm simd128, AVX2, AVX-512 …), or nothing when the core is built without SIMD.
#pragma once

#ifndef ATTN_SIMD
#define ATTN_SIMD 1
#endif

#if ATTN_SIMD
#include <xsimd/xsimd.hpp>

namespace attn::simd {
using Floats = xsimd::batch<float>;
using Ints = xsimd::batch<int32_t, Floats::arch_type>;
inline constexpr std::size_t kWidth = Floats::size;  // floats per register
inline const char* arch_name() {
  return Floats::arch_type::name();
}

// rows[0 … kWidth) transposed in registers: xsimd::transpose, except for AVX-512's 16 × 16, where
// xsimd (13.2) has no float version and its generic one swaps through memory one value at a time:
// there the usual four shuffle stages (unpack, shuffle_ps, two shuffle_f32x4), 64 shuffles.
inline void transpose(Floats* rows) {
#if defined(__AVX512F__)
  if constexpr (kWidth == 16) {
    __m512 r[16], t[16];
    for (int i = 0; i < 16; ++i) r[i] = rows[i];
    for (int i = 0; i < 8; ++i) {  // per 128-bit lane: elements 0, 1 and 2, 3 of row pairs
      t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int g = 0; g < 4; ++g) {  // r[4g + c] lane L: column 4L + c of rows 4g … 4g + 3
      r[4 * g] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], _MM_SHUFFLE(1, 0, 1, 0));
      r[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], _MM_SHUFFLE(3, 2, 3, 2));
      r[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], _MM_SHUFFLE(1, 0, 1, 0));
      r[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int c = 0; c < 4;
         ++c) {  // the 4 × 4 transpose of lanes among r[c], r[4+c], r[8+c], r[12+c]
      const __m512 v0 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x88);
      const __m512 v1 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xdd);
      const __m512 v2 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x88);
      const __m512 v3 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xdd);
      t[c] = _mm512_shuffle_f32x4(v0, v2, 0x88);
      t[4 + c] = _mm512_shuffle_f32x4(v1, v3, 0x88);
      t[8 + c] = _mm512_shuffle_f32x4(v0, v2, 0xdd);
      t[12 + c] = _mm512_shuffle_f32x4(v1, v3, 0xdd);
    }
    for (int i = 0; i < 16; ++i) rows[i] = t[i];
    return;
  }
#endif
  xsimd::transpose(rows, rows + kWidth);
}
}  // namespace attn::simd
#else
namespace attn::simd {
inline constexpr std::size_t kWidth = 1;
inline const char* arch_name() {
  return "scalar";
}
}  // namespace attn::simd
#endif
