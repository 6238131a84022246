// RMSNorm over each row: out = x · rsqrt(mean(x²) + ε) ⊙ weight (the Llama family's norm,
// transformers' LlamaRMSNorm; also Qwen3's, OLMo 2's and Phi-3's), or ⊙ (1 + weight) (Gemma's,
// Gemma2RMSNorm / Gemma3RMSNorm: weights stored centred on 0); no mean subtracted and no bias.
// Forward only (a loaded checkpoint is not trained).
#pragma once

#include <cmath>
#include <cstddef>
#include <span>
#include <string_view>

#include "attention/name_table.hpp"

namespace attn {

// The weight's form: w, or Gemma's 1 + w.
enum class RmsNormWeight { Plain, OnePlus };

// The forms by name, "plain" | "one-plus" (a layer's qkNormWeight); anything else throws, listing
// them.
inline std::span<const NamedKind<RmsNormWeight>> rms_norm_weights() {
  static constexpr NamedKind<RmsNormWeight> table[] = {{"plain", RmsNormWeight::Plain},
                                                       {"one-plus", RmsNormWeight::OnePlus}};
  return table;
}
inline RmsNormWeight parse_rms_norm_weight(std::string_view name) {
  return parse_named(rms_norm_weights(), name, "RMSNorm weight form");
}

namespace reference {

// out [rows, d] = x [rows, d] · 1/sqrt(mean(x²) + eps) ⊙ (weight or 1 + weight) [d]. Sums in
// double.
template <class T>
void rmsnorm_forward(const T* x, const T* weight, T* out, std::size_t rows, std::size_t d,
                     double eps, RmsNormWeight form = RmsNormWeight::Plain) {
  const double offset = form == RmsNormWeight::OnePlus ? 1.0 : 0.0;
  for (std::size_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    double squares = 0.0;
    for (std::size_t i = 0; i < d; ++i) squares += double(xr[i]) * double(xr[i]);
    const double s = 1.0 / std::sqrt(squares / double(d) + eps);
    for (std::size_t i = 0; i < d; ++i) {
      out[r * d + i] = T(double(xr[i]) * s * (offset + double(weight[i])));
    }
  }
}

}  // namespace reference

// The same in float (as transformers computes it in float32: the mean of squares, its rsqrt,
// then x·rsqrt and the weight, or 1 + weight). out may be x (in place).
void rmsnorm_forward(const float* x, const float* weight, float* out, std::size_t rows,
                     std::size_t d, float eps, RmsNormWeight form = RmsNormWeight::Plain);

}  // namespace attn
