// F16/BF16 to float, and StoredWeights' rows widened (or dequantized), see half.hpp.
#include "attention/ops/half.hpp"

#include <algorithm>
#include <cstring>

#include "attention/ops/quantized_weights.hpp"

namespace attn {

namespace {

// std::bit_cast is missing from Emscripten 3.1.6's libc++.
float float_from_bits(std::uint32_t bits) {
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

}  // namespace

float round_to_half(float x, HalfKind kind) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  // Drop the mantissa's low 16 (BF16: 7 bits kept) or 13 (F16: 10 kept) bits, to nearest, ties to
  // even; a carry into the exponent is the next power of two, as it should be.
  const unsigned dropped = kind == HalfKind::BF16 ? 16 : 13;
  const std::uint32_t half_ulp = (1u << (dropped - 1)) - 1, lowest_kept = (bits >> dropped) & 1u;
  bits = (bits + half_ulp + lowest_kept) & ~((1u << dropped) - 1);
  return float_from_bits(bits);
}

float f16_to_f32(std::uint16_t half) {
  const std::uint32_t sign = std::uint32_t(half & 0x8000u) << 16;
  const std::uint32_t exponent = (half >> 10) & 0x1Fu;
  std::uint32_t mantissa = half & 0x3FFu;
  std::uint32_t bits = 0;
  if (exponent == 0x1F) {  // inf or NaN
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {  // normal
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa != 0) {  // subnormal: m · 2^-24, exact in float
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | (std::uint32_t(113 - shift) << 23) | ((mantissa & 0x3FFu) << 13);
  } else {
    bits = sign;
  }
  return float_from_bits(bits);
}

float bf16_to_f32(std::uint16_t bf16) {
  return float_from_bits(std::uint32_t{bf16} << 16);
}

void widen(const std::uint16_t* in, float* out, std::size_t count, HalfKind kind) {
  if (kind == HalfKind::BF16) {
    for (std::size_t i = 0; i < count; ++i) out[i] = bf16_to_f32(in[i]);
  } else {
    for (std::size_t i = 0; i < count; ++i) out[i] = f16_to_f32(in[i]);
  }
}

void StoredWeights::rows(std::size_t first, std::size_t count, std::size_t cols, float* out) const {
  if (values != nullptr) {
    std::copy(values + first * cols, values + (first + count) * cols, out);
  } else if (quantized != nullptr) {
    quantized->dequantize_values(first * cols, (first + count) * cols, out);
  } else {
    widen(half + first * cols, out, count * cols, kind);
  }
}

}  // namespace attn
