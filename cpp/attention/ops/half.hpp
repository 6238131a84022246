// Weights a checkpoint keeps in its own 2-byte form (F16 or BF16) and the kernels widen to float as
// they read them: the two conversions, and a weight matrix as the model stores it (float, 2-byte
// values with their kind, or a GGUF file's quantized blocks: quantized_weights.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn {

enum class HalfKind { F16, BF16 };
struct QuantizedWeights;

// IEEE half (subnormals, infinities and NaN kept) and bfloat16, exactly, to float.
float f16_to_f32(std::uint16_t half);
float bf16_to_f32(std::uint16_t bf16);
inline float half_to_f32(std::uint16_t value, HalfKind kind) {
  return kind == HalfKind::BF16 ? bf16_to_f32(value) : f16_to_f32(value);
}
// x rounded to the nearest value the 2-byte kind holds (ties to even), as float: for |x| within
// F16's normal range (6.1e-5 … 65504; BF16: float's), where a checkpoint's constants (Gemma's
// √d_model) lie.
float round_to_half(float x, HalfKind kind);
// out [count] = in [count] widened.
void widen(const std::uint16_t* in, float* out, std::size_t count, HalfKind kind);

// A weight matrix (or table) as a model stores it: float values, 2-byte ones of `kind`, or
// quantized blocks.
struct StoredWeights {
  const float* values = nullptr;
  const std::uint16_t* half = nullptr;
  HalfKind kind = HalfKind::BF16;
  const QuantizedWeights* quantized = nullptr;

  StoredWeights() = default;
  StoredWeights(const float* floats) : values(floats) {}  // NOLINT: a float matrix as is
  StoredWeights(const std::uint16_t* halves, HalfKind k) : half(halves), kind(k) {}
  explicit StoredWeights(const QuantizedWeights* blocks) : quantized(blocks) {}
  bool empty() const { return values == nullptr && half == nullptr && quantized == nullptr; }
  // Rows [first, first + count) of a matrix with `cols` columns, as float into out [count, cols].
  void rows(std::size_t first, std::size_t count, std::size_t cols, float* out) const;
};

}  // namespace attn
