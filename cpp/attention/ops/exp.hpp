// Vectorized e^x for the softmax hot loop: Cody–Waite range reduction and a degree-7
// polynomial, relative error below 2e-7 on [-87.3, 88.3]; below that it returns exactly 0
// (so e^-inf = 0, which is what makes masked attention weights exactly zero).
#pragma once

#include <cstddef>

#include "attention/ops/simd.hpp"

namespace attn {

// out[i] = e^{x[i]}; out may alias x. Any length, any alignment.
void exp_values(const float* x, float* out, std::size_t count);

#if ATTN_SIMD
// e^x lane by lane, without any float->int conversion (slow on wasm): the integer part is
// taken with the 1.5·2^23 rounding trick and placed in the exponent bits directly.
inline simd::Floats exp_batch(simd::Floats x) {
  using simd::Floats;
  using simd::Ints;
  const Floats kLog2e(1.44269504088896341f);
  const Floats kLn2Hi(0.693359375f);
  const Floats kLn2Lo(-2.12194440e-4f);
  const Floats kRoundMagic(12582912.0f);  // 1.5 * 2^23
  const Floats kMax(88.3762626647949f);
  // Below kUnderflow the result would be subnormal: return exactly 0 (e^-inf = 0). Inputs are
  // clamped to kLowest, just above ln(FLT_MIN), so that no lane ever computes a subnormal:
  // wasm engines do not flush them, and one costs ~12x a normal exp.
  const Floats kUnderflow(-87.3365478515625f);
  const Floats kLowest(-87.33654f);
  const auto underflow = x < kUnderflow;
  x = xsimd::min(x, kMax);
  x = xsimd::max(x, kLowest);
  // n = round(x / ln 2), kept as the low mantissa bits of `shifted`.
  const Floats shifted = xsimd::fma(x, kLog2e, kRoundMagic);
  const Floats n = shifted - kRoundMagic;
  // r = x - n ln2 in two steps (Cody–Waite), |r| <= ln2 / 2.
  Floats r = xsimd::fnma(n, kLn2Hi, x);
  r = xsimd::fnma(n, kLn2Lo, r);
  // e^r ≈ 1 + r + r^2 P(r)  (Cephes expf coefficients).
  Floats p(1.9875691500e-4f);
  p = xsimd::fma(p, r, Floats(1.3981999507e-3f));
  p = xsimd::fma(p, r, Floats(8.3334519073e-3f));
  p = xsimd::fma(p, r, Floats(4.1665795894e-2f));
  p = xsimd::fma(p, r, Floats(1.6666665459e-1f));
  p = xsimd::fma(p, r, Floats(5.0000001201e-1f));
  p = xsimd::fma(p, r * r, r + Floats(1.0f));
  // 2^n: the integer n sits in the low bits of `shifted`; move n + 127 into the exponent field.
  const Ints n_bits = xsimd::bitwise_cast<int32_t>(shifted) - Ints(0x4B400000 - 127);
  const Floats two_to_n = xsimd::bitwise_cast<float>(n_bits << 23);
  return xsimd::select(underflow, Floats(0.0f), p * two_to_n);
}

// e^x for x <= 0 only — the softmax's e^{x - max} — in fewer operations than exp_batch (the hot
// loop of attention): no upper clamp, a degree-5 polynomial (minimax on [-ln2/2, ln2/2]),
// relative error below 5e-7 for x >= -87.33, and no select for the underflow: inputs are
// clamped at -88, where round(x·log2 e) = -127 makes 2^n's bits exactly +0, so -inf and
// everything below about -87.68 give exactly 0 without computing a subnormal. (Only inputs
// in (-87.68, -87.34) give a subnormal approximation of the subnormal e^x.)
inline simd::Floats exp_nonpositive_batch(simd::Floats x) {
  using simd::Floats;
  using simd::Ints;
  const Floats kRoundMagic(12582912.0f);  // 1.5 * 2^23
  x = xsimd::max(x, Floats(-88.0f));
  const Floats shifted = xsimd::fma(x, Floats(1.44269504088896341f), kRoundMagic);
  const Floats n = shifted - kRoundMagic;
  Floats r = xsimd::fnma(n, Floats(0.693359375f), x);
  r = xsimd::fnma(n, Floats(-2.12194440e-4f), r);
  Floats p(8.312525227665901e-3f);
  p = xsimd::fma(p, r, Floats(4.1890114545822144e-2f));
  p = xsimd::fma(p, r, Floats(1.6667114198207855e-1f));
  p = xsimd::fma(p, r, Floats(4.99992311000824e-1f));
  p = xsimd::fma(p, r * r, r + Floats(1.0f));
  const Ints n_bits = xsimd::bitwise_cast<int32_t>(shifted) - Ints(0x4B400000 - 127);
  return p * xsimd::bitwise_cast<float>(n_bits << 23);
}
#endif

}  // namespace attn
