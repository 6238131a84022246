// Vectorized e^x over arrays (see exp.hpp), with a scalar tail through the same batch code.
#include "attention/ops/exp.hpp"

#include <cmath>

namespace attn {

void exp_values(const float* x, float* out, std::size_t count) {
#if ATTN_SIMD
  constexpr std::size_t W = simd::kWidth;
  std::size_t i = 0;
  for (; i + W <= count; i += W) {
    exp_batch(simd::Floats::load_unaligned(x + i)).store_unaligned(out + i);
  }
  if (i < count) {  // the tail goes through a padded batch so every value sees the same math
    alignas(64) float tail[W] = {};
    for (std::size_t j = i; j < count; ++j) tail[j - i] = x[j];
    exp_batch(simd::Floats::load_aligned(tail)).store_aligned(tail);
    for (std::size_t j = i; j < count; ++j) out[j] = tail[j - i];
  }
#else
  // The same contract as exp_batch: exactly 0 where e^x would be subnormal.
  for (std::size_t i = 0; i < count; ++i) {
    out[i] = x[i] < -87.3365478515625f ? 0.0f : std::exp(x[i]);
  }
#endif
}

}  // namespace attn
