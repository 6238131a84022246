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
}  // namespace attn::simd
#else
namespace attn::simd {
inline constexpr std::size_t kWidth = 1;
inline const char* arch_name() {
  return "scalar";
}
}  // namespace attn::simd
#endif
