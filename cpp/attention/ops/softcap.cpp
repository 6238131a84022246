// Soft-capping's float forward, see softcap.hpp.
#include "attention/ops/softcap.hpp"

#include "attention/ops/simd.hpp"

namespace attn {

void softcap_forward(float* x, std::size_t count, float cap) {
  std::size_t i = 0;
#if ATTN_SIMD
  using simd::Floats;
  const Floats c(cap);
  for (; i + simd::kWidth <= count; i += simd::kWidth) {
    (xsimd::tanh(Floats::load_unaligned(x + i) / c) * c).store_unaligned(x + i);
  }
#endif
  for (; i < count; ++i) x[i] = std::tanh(x[i] / cap) * cap;
}

}  // namespace attn
