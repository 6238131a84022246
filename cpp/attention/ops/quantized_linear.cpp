// The products over quantized weights, see quantized_linear.hpp.
#include "attention/ops/quantized_linear.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "attention/ops/matmul.hpp"
#include "attention/parallel.hpp"

#if ATTN_SIMD && (defined(__AVX2__) || defined(__AVX512F__) || defined(__SSE4_1__))
#include <immintrin.h>
#endif
#if ATTN_SIMD && defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace attn {

namespace reference {

void quantized_linear_forward(const float* x, const QuantizedMatrix& w, const float* b, float* y,
                              std::size_t m) {
  std::vector<float> values(w.rows() * w.cols());
  w.dequantize_rows(0, w.rows(), values.data());
  linear_forward(x, values.data(), b, y, m, w.cols(), w.rows());
}

}  // namespace reference

namespace {

constexpr std::size_t NR = kPanelWidth;

#if ATTN_SIMD
using simd::Floats;
using simd::Ints;
constexpr std::size_t W = simd::kWidth;
constexpr std::size_t L = NR / 2;  // lanes of a byte plane (quantized_weights.hpp)
static_assert(NR == 2 * W && L == W, "a panel is two vectors: rows j and j + W share a byte");

// W bytes (or halves) from p, each widened to one 32-bit lane: unsigned, signed, 16-bit unsigned.
inline Ints lanes_u8(const std::uint8_t* p) {
#if defined(__AVX512F__)
  return Ints(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
#elif defined(__AVX2__)
  return Ints(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
#elif defined(__wasm_simd128__)
  return Ints(wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(wasm_v128_load32_zero(p))));
#elif defined(__SSE4_1__)
  std::int32_t word;
  std::memcpy(&word, p, 4);
  return Ints(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(word)));
#else
  alignas(64) std::int32_t lanes[W];
  for (std::size_t i = 0; i < W; ++i) lanes[i] = p[i];
  return Ints::load_aligned(lanes);
#endif
}
inline Ints lanes_i8(const std::uint8_t* p) {
#if defined(__AVX512F__)
  return Ints(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
#elif defined(__AVX2__)
  return Ints(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
#elif defined(__wasm_simd128__)
  return Ints(wasm_i32x4_extend_low_i16x8(wasm_i16x8_extend_low_i8x16(wasm_v128_load32_zero(p))));
#elif defined(__SSE4_1__)
  std::int32_t word;
  std::memcpy(&word, p, 4);
  return Ints(_mm_cvtepi8_epi32(_mm_cvtsi32_si128(word)));
#else
  alignas(64) std::int32_t lanes[W];
  for (std::size_t i = 0; i < W; ++i) lanes[i] = static_cast<std::int8_t>(p[i]);
  return Ints::load_aligned(lanes);
#endif
}
inline Ints lanes_u16(const std::uint8_t* p) {
#if defined(__AVX512F__)
  return Ints(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))));
#elif defined(__AVX2__)
  return Ints(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
#elif defined(__wasm_simd128__)
  return Ints(wasm_u32x4_load16x4(p));
#elif defined(__SSE4_1__)
  return Ints(_mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
#else
  alignas(64) std::int32_t lanes[W];
  for (std::size_t i = 0; i < W; ++i) lanes[i] = p[2 * i] | (p[2 * i + 1] << 8);
  return Ints::load_aligned(lanes);
#endif
}

inline Ints lanes_i16(const std::uint8_t* p) {
#if defined(__AVX512F__)
  return Ints(_mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))));
#elif defined(__AVX2__)
  return Ints(_mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
#elif defined(__wasm_simd128__)
  return Ints(wasm_i32x4_load16x4(p));
#elif defined(__SSE4_1__)
  return Ints(_mm_cvtepi16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
#else
  alignas(64) std::int32_t lanes[W];
  for (std::size_t i = 0; i < W; ++i) lanes[i] = std::int16_t(p[2 * i] | (p[2 * i + 1] << 8));
  return Ints::load_aligned(lanes);
#endif
}

// Small integers (|q| < 2²²: quants, sub-block scales) as float, exactly. In wasm, LLVM (14) folds
// a widening (i32x4.extend_low_i16x8) into the conversion after it and then converts lane by lane
// (no wasm instruction converts i16 lanes): there the integer is added to the bits of 1.5·2²³
// instead, whose float minus 1.5·2²³ is the integer (two vector operations, no scalarising).
inline Floats small_to_float(Ints q) {
#if defined(__wasm_simd128__)
  return xsimd::bitwise_cast<float>(q + Ints(0x4B400000)) - Floats(12582912.0f);
#else
  return xsimd::to_float(q);
#endif
}

#if defined(__wasm_simd128__)
// A swizzle's indices that put bytes 0 … 3 in the top byte of lanes 0 … 3, zeros below.
const v128_t kLaneTops =
    wasm_i8x16_const(-1, -1, -1, 0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1, 3);
#endif

// W IEEE halves (little-endian) as float, exactly, for finite halves (a loaded model's scales are:
// the import refuses a tensor with a non-finite value): the magnitude's bits moved into a float's
// and scaled by 2^112 (a subnormal half lands on a float subnormal, the product is exact), the sign
// put back.
inline Floats halves_to_floats(const std::uint8_t* p) {
  const Ints h = lanes_u16(p);
  const Floats magnitude =
      xsimd::bitwise_cast<float>((h & Ints(0x7FFF)) << 13) * Floats(5.192296858534828e33f);
  return xsimd::bitwise_cast<float>(xsimd::bitwise_cast<std::int32_t>(magnitude) |
                                    ((h & Ints(0x8000)) << 16));
}

// W values of a kept F32, F16 or BF16 matrix (little-endian) as float, over kValueScale<T>: F32's
// and BF16's exactly (BF16 a float's top half); F16's sign, exponent and mantissa moved into a
// float's places (sign-extended, shifted, masked: the value times 2⁻¹¹², exact, subnormal halves
// on float subnormals; an F16 matrix's values are finite: the import refuses any other).
template <GgmlType T>
inline Floats plain_values_over_scale(const std::uint8_t* p) {
  if constexpr (T == GgmlType::F32) {
    return Floats::load_unaligned(reinterpret_cast<const float*>(p));
  } else if constexpr (T == GgmlType::BF16) {
    return xsimd::bitwise_cast<float>(lanes_u16(p) << 16);
  } else {
    return xsimd::bitwise_cast<float>((lanes_i16(p) << 13) & Ints(std::int32_t(0x8FFFE000u)));
  }
}
template <GgmlType T>
constexpr float kValueScale = T == GgmlType::F16 ? 0x1p112f : 1.0f;
// The values themselves.
template <GgmlType T>
inline Floats plain_values(const std::uint8_t* p) {
  if constexpr (T == GgmlType::F16) {
    return plain_values_over_scale<T>(p) * Floats(kValueScale<T>);
  } else {
    return plain_values_over_scale<T>(p);
  }
}

// y[0, cols) = x[0, w.cols) · the rows of P panels of a kept F32, F16 or BF16 matrix from `panel`
// + bias: the one-row kernel of the float formats, matmul's one-row kernel with each value widened
// as it is loaded: every output summed from its bias over k in order, so bit for bit the float
// product over the widened weights (linear_forward's). With scale_x (every |x| < 2¹⁶), F16's 2¹¹²
// goes on x_k instead of on each weight: x_k·2¹¹² is exact and finite, and (x_k·2¹¹²)·(w·2⁻¹¹²) is
// the real number x_k·w, so every product (and fused multiply-add) rounds as x_k·w does.
template <GgmlType T, std::size_t P>
void row_values(const float* x, bool scale_x, const QuantizedMatrix& w, std::size_t panel, float* y,
                std::size_t cols, const float* bias) {
  constexpr std::size_t kStep = quantized_layout(T).record_bytes(NR);  // one value of NR rows
  constexpr std::size_t kHigh = quantized_layout(T).plain_bytes * W;   // rows W … 2W − 1
  alignas(64) float edge[P * NR] = {};
  if (bias) std::copy(bias, bias + cols, edge);
  Floats acc0[P], acc1[P];
  const std::uint8_t* rows[P];
  for (std::size_t p = 0; p < P; ++p) {
    acc0[p] = Floats::load_aligned(edge + p * NR);
    acc1[p] = Floats::load_aligned(edge + p * NR + W);
    rows[p] = w.record(panel + p, 0);
  }
  const auto sum = [&](auto value_of, float x_factor) {
    for (std::size_t k = 0; k < w.cols(); ++k) {
      const Floats xk(x[k] * x_factor);
      for (std::size_t p = 0; p < P; ++p) {
        acc0[p] = xsimd::fma(xk, value_of(rows[p]), acc0[p]);
        acc1[p] = xsimd::fma(xk, value_of(rows[p] + kHigh), acc1[p]);
        rows[p] += kStep;
      }
    }
  };
  if (scale_x) {
    sum([](const std::uint8_t* at) { return plain_values_over_scale<T>(at); }, kValueScale<T>);
  } else {
    sum([](const std::uint8_t* at) { return plain_values<T>(at); }, 1.0f);
  }
  for (std::size_t p = 0; p < P; ++p) {
    acc0[p].store_aligned(edge + p * NR);
    acc1[p].store_aligned(edge + p * NR + W);
  }
  std::copy(edge, edge + cols, y);
}

// Block b of P consecutive panels from `panel`, read for its values: each panel's quants and high
// bits, and each group's scale and offset per lane (rows 0 … W − 1, then W … 2W − 1), so that a
// value is fma(scale, q, offset) — ops/dequantize's value: an exact scale·q and an offset that is
// exact (−8·d, −16·d, −32·scale) or the one rounding ggml makes (+ m, − dmin·min).
template <GgmlType T, std::size_t P>
struct PanelBlocks {
  static constexpr QuantizedLayout layout = quantized_layout(T);
  static constexpr std::size_t kGroups = layout.block_values / layout.group_values;
  static constexpr std::size_t kBits = layout.high_bits;
  static constexpr std::size_t kPerByte = kBits ? 4 / kBits : 1;  // values per byte of high bits
  // A quant byte holds rows j + W's whole value above rows j's low kLowBits bits.
  static constexpr std::size_t kLowBits = 4 - kBits;
  static constexpr std::int32_t kLowMask = (1 << kLowBits) - 1;
  static constexpr std::int32_t kRestMask = (1 << (2 * kBits)) - 1;  // rows j's bits in the plane
#if defined(__wasm_simd128__)
  // In wasm, the quants are placed in the top byte of each 32-bit lane (one swizzle; a K-quant's or
  // Q5's high bits beside them) and converted by wasm's one conversion (f32x4.convert_i32x4_s):
  // q·2²⁴, exact (Q8_0's, and the low nibble's; the high nibble is shifted down to q). The scales
  // carry the 2⁻²⁴, so scale·quant is the same exact product.
  static constexpr bool kTopByte = true;
#else
  static constexpr bool kTopByte = false;
#endif
  static constexpr float kLowFactor = kTopByte ? 0x1p-24f : 1.0f;  // rows 0 … W − 1's scales
  static constexpr float kHighFactor =                             // rows W … 2W − 1's
      kTopByte && layout.eight_bit ? 0x1p-24f : 1.0f;

  const std::uint8_t* quants[P];
  const std::uint8_t* high[P];
  // Every group's scales and offsets, kept in L1 (the values' loop reads them per group).
  alignas(64) float scales[P][kGroups][NR];
  alignas(64) float offsets[P][kGroups][NR];

  PanelBlocks(const QuantizedMatrix& w, std::size_t panel, std::size_t b) {
    for (std::size_t p = 0; p < P; ++p) {
      const std::uint8_t* rec = w.record(panel + p, b);
      quants[p] = rec + layout.quants_offset(NR);
      high[p] = rec + layout.high_offset(NR);
      const Floats d0 = halves_to_floats(rec), d1 = halves_to_floats(rec + 2 * W);
      Floats m0(0.0f), m1(0.0f);
      if constexpr (layout.has_m) {
        m0 = halves_to_floats(rec + layout.m_offset(NR));
        m1 = halves_to_floats(rec + layout.m_offset(NR) + 2 * W);
      }
      for (std::size_t g = 0; g < kGroups; ++g) {
        Floats s0 = d0, s1 = d1, o0(0.0f), o1(0.0f);
        if constexpr (T == GgmlType::Q4_0) {
          o0 = d0 * Floats(-8.0f);
          o1 = d1 * Floats(-8.0f);
        } else if constexpr (T == GgmlType::Q5_0) {
          o0 = d0 * Floats(-16.0f);
          o1 = d1 * Floats(-16.0f);
        } else if constexpr (T == GgmlType::Q4_1 || T == GgmlType::Q5_1) {
          o0 = m0;
          o1 = m1;
        } else if constexpr (T == GgmlType::Q4_K || T == GgmlType::Q5_K) {
          const std::uint8_t* sc = rec + layout.scales_offset(NR) + g * NR;
          const std::uint8_t* mins = rec + layout.mins_offset(NR) + g * NR;
          s0 = d0 * small_to_float(lanes_u8(sc));
          s1 = d1 * small_to_float(lanes_u8(sc + W));
          o0 = -(m0 * small_to_float(lanes_u8(mins)));
          o1 = -(m1 * small_to_float(lanes_u8(mins + W)));
        } else if constexpr (T == GgmlType::Q6_K) {
          const std::uint8_t* sc = rec + layout.scales_offset(NR) + g * NR;
          s0 = d0 * small_to_float(lanes_i8(sc));
          s1 = d1 * small_to_float(lanes_i8(sc + W));
          o0 = s0 * Floats(-32.0f);
          o1 = s1 * Floats(-32.0f);
        }
        (s0 * Floats(kLowFactor)).store_aligned(scales[p][g]);
        (s1 * Floats(kHighFactor)).store_aligned(scales[p][g] + W);
        o0.store_aligned(offsets[p][g]);
        o1.store_aligned(offsets[p][g] + W);
      }
    }
  }

  // For each value v of group g (counted from the block's first), take(v, q0, q1) gets each
  // panel's quants as floats (exact small integers, times 1 / kLowFactor and 1 / kHighFactor):
  // q0[p] rows 0 … W − 1, q1[p] rows W … 2W − 1.
  template <class Take>
  void quants_of_group(std::size_t g, Take&& take) const {
    const std::size_t v0 = g * layout.group_values;
    for (std::size_t v = v0; v < v0 + layout.group_values; v += kPerByte) {
      [[maybe_unused]] Ints h[P];
      if constexpr (kBits != 0) {
        for (std::size_t p = 0; p < P; ++p) {
#if defined(__wasm_simd128__)
          if constexpr (kTopByte) {  // each row's byte of high bits in its lane's top byte
            h[p] = Ints(
                wasm_i8x16_swizzle(wasm_v128_load32_zero(high[p] + (v / kPerByte) * L), kLaneTops));
            continue;
          }
#endif
          h[p] = lanes_u8(high[p] + (v / kPerByte) * L);
        }
      }
      for (std::size_t s = 0; s < kPerByte; ++s) {
        Floats q0f[P], q1f[P];
        for (std::size_t p = 0; p < P; ++p) {
#if defined(__wasm_simd128__)
          if constexpr (kTopByte) {
            const v128_t lane_tops = kLaneTops;
            if constexpr (layout.eight_bit) {
              const v128_t bytes = wasm_v128_load64_zero(quants[p] + (v + s) * NR);
              const v128_t high_tops =
                  wasm_i8x16_const(-1, -1, -1, 4, -1, -1, -1, 5, -1, -1, -1, 6, -1, -1, -1, 7);
              q0f[p] = Floats(wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(bytes, lane_tops)));
              q1f[p] = Floats(wasm_f32x4_convert_i32x4(wasm_i8x16_swizzle(bytes, high_tops)));
            } else {
              const v128_t tops =
                  wasm_i8x16_swizzle(wasm_v128_load32_zero(quants[p] + (v + s) * L), lane_tops);
              v128_t low =
                  wasm_v128_and(tops, wasm_i32x4_splat(kLowMask << 24));  // (low bits) · 2²⁴
              v128_t up = wasm_u32x4_shr(tops, 24 + kLowBits);            // q
              // the rest of q: 2·kBits bits at 2·kBits·s in h's top byte, wanted at kLowBits
              if constexpr (kBits != 0) {
                const int from_bit = 24 + int(2 * kBits * s), to_bit = 24 + int(kLowBits);
                const v128_t from = h[p];
                low = wasm_v128_or(
                    low, wasm_v128_and(to_bit >= from_bit ? wasm_i32x4_shl(from, to_bit - from_bit)
                                                          : wasm_u32x4_shr(from, from_bit - to_bit),
                                       wasm_i32x4_splat(kRestMask << to_bit)));
              }
              q0f[p] = Floats(wasm_f32x4_convert_i32x4(low));
              q1f[p] = Floats(wasm_f32x4_convert_i32x4(up));
            }
            continue;
          }
#endif
          Ints q0, q1;
          if constexpr (layout.eight_bit) {
#if defined(__wasm_simd128__)  // the step's 8 bytes in one load, widened to two vectors
            const v128_t bytes = wasm_i16x8_load8x8(quants[p] + (v + s) * NR);
            q0 = Ints(wasm_i32x4_extend_low_i16x8(bytes));
            q1 = Ints(wasm_i32x4_extend_high_i16x8(bytes));
#else
            q0 = lanes_i8(quants[p] + (v + s) * NR);
            q1 = lanes_i8(quants[p] + (v + s) * NR + W);
#endif
          } else {
            const Ints n = lanes_u8(quants[p] + (v + s) * L);
            q0 = n & Ints(kLowMask);
            q1 = n >> int(kLowBits);
            if constexpr (kBits != 0) {
              q0 = q0 | (((h[p] >> int(2 * kBits * s)) & Ints(kRestMask)) << int(kLowBits));
            }
          }
          q0f[p] = small_to_float(q0);  // |q| < 2²²: exact, signed too
          q1f[p] = small_to_float(q1);
        }
        take(v + s, q0f, q1f);
      }
    }
  }
};

// Dequantizes blocks [b0, b1) of P consecutive panels from `panel`, value by value: for each
// value k (counted from block b0's first) take(k, low, high) gets each panel's two vectors (rows 0
// … W − 1 and W … 2W − 1), low[p] and high[p], each lane ops/dequantize's value.
template <GgmlType T, std::size_t P, class Take>
inline void decode_panels(const QuantizedMatrix& w, std::size_t panel, std::size_t b0,
                          std::size_t b1, Take&& take) {
  using Blocks = PanelBlocks<T, P>;
  for (std::size_t b = b0; b < b1; ++b) {
    const Blocks blocks(w, panel, b);
    const std::size_t k_block = (b - b0) * Blocks::layout.block_values;
    for (std::size_t g = 0; g < Blocks::kGroups; ++g) {
      blocks.quants_of_group(g, [&](std::size_t v, const Floats* q0, const Floats* q1) {
        Floats low[P], up[P];
        for (std::size_t p = 0; p < P; ++p) {
          const Floats s0 = Floats::load_aligned(blocks.scales[p][g]);
          const Floats s1 = Floats::load_aligned(blocks.scales[p][g] + W);
          if constexpr (T == GgmlType::Q8_0) {  // d · q: no offset (a zero's sign as ggml's)
            low[p] = s0 * q0[p];
            up[p] = s1 * q1[p];
          } else {
            low[p] = xsimd::fma(s0, q0[p], Floats::load_aligned(blocks.offsets[p][g]));
            up[p] = xsimd::fma(s1, q1[p], Floats::load_aligned(blocks.offsets[p][g] + W));
          }
        }
        take(k_block + v, low, up);
      });
    }
  }
}

// Panels the one-row kernel streams at once: P independent pairs of sums. Q8_0's and Q4_0's steps
// are the fewest operations, so more panels (more independent sums) keep wasm's pipes busy: in
// Chromium, 6 panels decode 1.07–1.11× faster than 3 (and about as fast as 5). The formats with
// high bits or several groups per block hold more values live: at 4 they run out of V8's 16
// vector registers (Q5_0: 2.2× slower), and 2 is slower than 3.
constexpr std::size_t row_panels_of(GgmlType type) {
  return type == GgmlType::Q8_0 || type == GgmlType::Q4_0 || quantized_layout(type).plain_bytes ? 6
                                                                                                : 3;
}

// y[0, cols) = x[0, w.cols) · the rows of P panels from `panel` + bias: the one-row kernel. A
// group's values share a scale s and an offset o (value = s·q + o), so its part of the sum is
// s · Σ x_k q_k + o · Σ x_k: the quants are multiply-added with x as exact small integers and
// scaled once per group, and the groups' sums of x (x_sums, one per group of k, the same for
// every row) carry the offsets. Q8_0's quants times the scale are the weights: no offset term.
// Q4_0's, Q5_0's and Q6_K's offsets (−8·d, −16·d, −32·scale) are summed as the others' are, not
// taken from the quants a step at a time: that costs two integer subtractions a step (without
// them Q4_0 decodes 1.12× faster in Chromium, and Q6_K's one-row kernel runs 1.14× faster in wasm
// on Node, 16-value groups and all). Their quants lie in 0 … 2z − 1 around the zero point z (8,
// 16, 32), so the two terms cancel by at most half.
// The result is the float product over the dequantized weights within float32 rounding (not bit for
// bit: the prompt kernel's order differs).
template <GgmlType T, std::size_t P>
void row_panels(const float* x, const float* x_sums, const QuantizedMatrix& w, std::size_t panel,
                float* y, std::size_t cols, const float* bias) {
  using Blocks = PanelBlocks<T, P>;
  constexpr bool kHasOffset = T != GgmlType::Q8_0;
  alignas(64) float edge[P * NR] = {};
  if (bias) std::copy(bias, bias + cols, edge);
  Floats acc0[P], acc1[P];
  for (std::size_t p = 0; p < P; ++p) {
    acc0[p] = bias ? Floats::load_aligned(edge + p * NR) : Floats(0.0f);
    acc1[p] = bias ? Floats::load_aligned(edge + p * NR + W) : Floats(0.0f);
  }
  for (std::size_t b = 0; b < w.blocks_per_row(); ++b) {
    const Blocks blocks(w, panel, b);
    const float* xb = x + b * Blocks::layout.block_values;
    for (std::size_t g = 0; g < Blocks::kGroups; ++g) {
      Floats sum0[P], sum1[P];
      for (std::size_t p = 0; p < P; ++p) sum0[p] = sum1[p] = Floats(0.0f);
      blocks.quants_of_group(g, [&](std::size_t v, const Floats* q0, const Floats* q1) {
        const Floats xk(xb[v]);
        for (std::size_t p = 0; p < P; ++p) {
          sum0[p] = xsimd::fma(xk, q0[p], sum0[p]);
          sum1[p] = xsimd::fma(xk, q1[p], sum1[p]);
        }
      });
      const Floats x_sum(x_sums[b * Blocks::kGroups + g]);
      for (std::size_t p = 0; p < P; ++p) {
        acc0[p] = xsimd::fma(Floats::load_aligned(blocks.scales[p][g]), sum0[p], acc0[p]);
        acc1[p] = xsimd::fma(Floats::load_aligned(blocks.scales[p][g] + W), sum1[p], acc1[p]);
        if constexpr (kHasOffset) {
          acc0[p] = xsimd::fma(Floats::load_aligned(blocks.offsets[p][g]), x_sum, acc0[p]);
          acc1[p] = xsimd::fma(Floats::load_aligned(blocks.offsets[p][g] + W), x_sum, acc1[p]);
        }
      }
    }
  }
  for (std::size_t p = 0; p < P; ++p) {
    acc0[p].store_aligned(edge + p * NR);
    acc1[p].store_aligned(edge + p * NR + W);
  }
  std::copy(edge, edge + cols, y);
}

// The one-row kernel of w's type T: row_values for the float formats, else row_panels (x_sums
// its groups' Σ x, scale_x row_values' choice for F16).
template <GgmlType T, std::size_t P>
inline void row_product(const float* x, const float* x_sums, bool scale_x, const QuantizedMatrix& w,
                        std::size_t panel, float* y, std::size_t cols, const float* bias) {
  if constexpr (quantized_layout(T).plain_bytes != 0) {
    row_values<T, P>(x, scale_x, w, panel, y, cols, bias);
  } else {
    row_panels<T, P>(x, x_sums, w, panel, y, cols, bias);
  }
}

// Σ x over each group of `group` values of x [depth], in order: the one-row kernel's offsets'
// factor.
void group_sums(const float* x, std::size_t depth, std::size_t group, AlignedVector<float>& sums) {
  sums.assign(depth / group, 0.0f);
  for (std::size_t g = 0; g < sums.size(); ++g) {
    float s = 0.0f;
    for (std::size_t k = 0; k < group; ++k) s += x[g * group + k];
    sums[g] = s;
  }
}

template <GgmlType T>
void widen_panel(const QuantizedMatrix& w, std::size_t panel, std::size_t k_first, std::size_t kc,
                 float* out) {
  if constexpr (constexpr std::size_t size = quantized_layout(T).plain_bytes; size != 0) {
    for (std::size_t k = 0; k < kc; ++k) {
      const std::uint8_t* rows = w.record(panel, k_first + k);
      plain_values<T>(rows).store_aligned(out + k * NR);
      plain_values<T>(rows + size * W).store_aligned(out + k * NR + W);
    }
    return;
  }
  constexpr std::size_t bv = quantized_layout(T).block_values;
  decode_panels<T, 1>(w, panel, k_first / bv, (k_first + kc) / bv,
                      [&](std::size_t k, const Floats* low, const Floats* high) {
                        low[0].store_aligned(out + k * NR);
                        high[0].store_aligned(out + k * NR + W);
                      });
}

// The format's kernel: f.template operator()<T>() for w's type T.
template <class F>
void with_type(GgmlType type, F&& f) {
  switch (type) {
    case GgmlType::Q8_0:
      return f.template operator()<GgmlType::Q8_0>();
    case GgmlType::Q4_0:
      return f.template operator()<GgmlType::Q4_0>();
    case GgmlType::Q4_1:
      return f.template operator()<GgmlType::Q4_1>();
    case GgmlType::Q5_0:
      return f.template operator()<GgmlType::Q5_0>();
    case GgmlType::Q5_1:
      return f.template operator()<GgmlType::Q5_1>();
    case GgmlType::Q4_K:
      return f.template operator()<GgmlType::Q4_K>();
    case GgmlType::Q5_K:
      return f.template operator()<GgmlType::Q5_K>();
    case GgmlType::Q6_K:
      return f.template operator()<GgmlType::Q6_K>();
    case GgmlType::F32:
      return f.template operator()<GgmlType::F32>();
    case GgmlType::F16:
      return f.template operator()<GgmlType::F16>();
    case GgmlType::BF16:
      return f.template operator()<GgmlType::BF16>();
    default:
      return;
  }
}
#endif

}  // namespace

void widen_quantized_panel(const QuantizedMatrix& w, std::size_t panel, std::size_t k_first,
                           std::size_t kc, float* out) {
#if ATTN_SIMD
  with_type(w.type(), [&]<GgmlType T>() { widen_panel<T>(w, panel, k_first, kc, out); });
#else
  // Without SIMD: each row's blocks dequantized by the reference, then laid into the panel.
  std::vector<float> row(w.cols());
  for (std::size_t r = 0; r < NR; ++r) {
    const std::size_t index = panel * NR + r;
    if (index < w.rows()) w.dequantize_rows(index, 1, row.data());
    for (std::size_t k = 0; k < kc; ++k) {
      out[k * NR + r] = index < w.rows() ? row[k_first + k] : 0.0f;
    }
  }
#endif
}

namespace {

// One row range of a product: a matrix (a model weight's part), its bias [rows] or nullptr, and its
// outputs y[r, 0 … rows) at row stride ldy.
struct ProductPart {
  const QuantizedMatrix* w;
  const float* bias;
  float* y;
};

// y = x · Wᵀ + b over every part, in one split over the thread pool (one hand-over per product, not
// per part: a generation step's q, k and v are three parts, and a part as small as a GQA model's k
// would otherwise run on one thread while the others wait). The items are, per part, runs of
// row_panels_of(type) panels (one row) or panels (more rows); each output is computed by one thread
// in one order, so the thread count never changes a bit.
void forward_parts(const float* x, const std::vector<ProductPart>& parts, std::size_t m,
                   std::size_t ldy) {
  if (m == 0 || parts.empty()) return;
  const std::size_t depth = parts.front().w->cols();
  const std::size_t panel_flops = std::max<std::size_t>(1, m * depth * NR);
#if ATTN_SIMD
  if (m == 1) {  // one row: every panel streamed once, dequantized in registers
    // Σ x per group, once per group size among the parts (16 for Q6_K, 32 for the others; none
    // for the float formats, which have no offsets)
    thread_local std::vector<std::pair<std::size_t, AlignedVector<float>>> x_sums;
    std::size_t sizes = 0;
    std::vector<const float*> sums_of(parts.size(), nullptr);
    std::vector<std::size_t> first(parts.size() + 1, 0);  // part i's items: [first[i], first[i+1])
    std::size_t run_panels = 1;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const QuantizedLayout layout = quantized_layout(parts[i].w->type());
      if (!layout.plain_bytes) {
        const std::size_t group = layout.group_values;
        std::size_t s = 0;
        while (s < sizes && x_sums[s].first != group) ++s;
        if (s == sizes) {
          if (x_sums.size() == sizes) x_sums.emplace_back();
          x_sums[s].first = group;
          group_sums(x, depth, group, x_sums[s].second);
          ++sizes;
        }
        sums_of[i] = x_sums[s].second.data();  // this thread's buffers, read by every part
      }
      const std::size_t group_panels = row_panels_of(parts[i].w->type());
      first[i + 1] = first[i] + (parts[i].w->panels() + group_panels - 1) / group_panels;
      run_panels = std::max(run_panels, group_panels);
    }
    // F16's one-row kernel scales x instead of each weight when every |x| < 2¹⁶ (row_values).
    bool scale_x = std::any_of(parts.begin(), parts.end(), [](const ProductPart& part) {
      return part.w->type() == GgmlType::F16;
    });
    for (std::size_t k = 0; scale_x && k < depth; ++k) scale_x = std::abs(x[k]) < 65536.0f;
    // A part holds kParallelRowMultiplyAdds counted in the parts' longest runs (3 or 6 panels): in
    // runs of 3, a Q8_0 matrix of 576 × 576 (a SmolLM2 attention output) stayed on one thread.
    const std::size_t min_items = kParallelRowMultiplyAdds / (panel_flops * run_panels) + 1;
    parallel_for(first.back(), min_items, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = 0; i < parts.size(); ++i) {
        const std::size_t from = std::max(begin, first[i]), to = std::min(end, first[i + 1]);
        if (from >= to) continue;
        const QuantizedMatrix& w = *parts[i].w;
        const float* bias = parts[i].bias;
        float* y = parts[i].y;
        with_type(w.type(), [&]<GgmlType T>() {
          constexpr std::size_t kRowPanels = row_panels_of(T);
          std::size_t p = (from - first[i]) * kRowPanels;
          const std::size_t last = std::min(w.panels(), (to - first[i]) * kRowPanels);
          const auto row_bias = [&](std::size_t q) { return bias ? bias + q * NR : nullptr; };
          for (; p + kRowPanels <= last; p += kRowPanels) {
            const std::size_t cols = std::min(kRowPanels * NR, w.rows() - p * NR);
            row_product<T, kRowPanels>(x, sums_of[i], scale_x, w, p, y + p * NR, cols, row_bias(p));
          }
          for (; p < last; ++p) {
            row_product<T, 1>(x, sums_of[i], scale_x, w, p, y + p * NR,
                              std::min(NR, w.rows() - p * NR), row_bias(p));
          }
        });
      }
    });
    return;
  }
#endif
  // More rows: each panel's slice widened once (this thread's buffer), then matmul's kernel down
  // the rows, packed into row tiles first (by the calling thread, as matmul_packed does).
  thread_local AlignedVector<float> row_tiles;
  pack_row_tiles(ConstMatView(x, m, depth), row_tiles);
  const float* tiles = row_tiles.data();
  std::vector<std::size_t> first(parts.size() + 1, 0);  // part i's panels: [first[i], first[i+1])
  for (std::size_t i = 0; i < parts.size(); ++i) first[i + 1] = first[i] + parts[i].w->panels();
  parallel_for(
      first.back(), kParallelMultiplyAdds / panel_flops + 1,
      [&](std::size_t begin, std::size_t end) {
        thread_local AlignedVector<float> slice;
        for (std::size_t i = 0; i < parts.size(); ++i) {
          const QuantizedMatrix& w = *parts[i].w;
          const std::size_t to = std::min(end, first[i + 1]);
          for (std::size_t p = std::max(begin, first[i]) - first[i]; p + first[i] < to; ++p) {
            const std::size_t cols = std::min(NR, w.rows() - p * NR);
            for (std::size_t k0 = 0; k0 < depth; k0 += kMatmulDepthBlock) {
              const std::size_t kc = std::min(kMatmulDepthBlock, depth - k0);
              slice.resize(kc * NR);
              widen_quantized_panel(w, p, k0, kc, slice.data());
              multiply_panel(tiles, m, depth, k0, kc, slice.data(), parts[i].y + p * NR, ldy, cols,
                             parts[i].bias ? parts[i].bias + p * NR : nullptr, k0 > 0);
            }
          }
        }
      });
}

}  // namespace

void quantized_linear_forward(const float* x, const QuantizedMatrix& w, const float* b, float* y,
                              std::size_t m, std::size_t ldy) {
  forward_parts(x, {{&w, b, y}}, m, ldy);
}

void quantized_linear_forward(const float* x, const QuantizedWeights& w, const float* b, float* y,
                              std::size_t m) {
  std::vector<ProductPart> parts;
  parts.reserve(w.parts.size());
  for (const QuantizedWeights::Part& part : w.parts) {
    parts.push_back({&part.matrix, b ? b + part.first_row : nullptr, y + part.first_row});
  }
  forward_parts(x, parts, m, w.rows);
}

}  // namespace attn
