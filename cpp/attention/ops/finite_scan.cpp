// finite_scan: the largest |value| and a finiteness check in one vectorized pass.
#include "attention/ops/finite_scan.hpp"

#include <algorithm>
#include <cmath>

#include "attention/ops/simd.hpp"

namespace attn {

FiniteScan finite_scan_reference(std::span<const float> values) {
  FiniteScan scan;
  for (const float v : values) {
    if (!std::isfinite(v)) scan.finite = false;
    scan.max_abs = std::max(scan.max_abs, std::abs(v));
  }
  return scan;
}

FiniteScan finite_scan(std::span<const float> values) {
#if ATTN_SIMD
  using simd::Floats;
  const std::size_t count = values.size();
  const float* data = values.data();
  Floats largest(0.0f);
  // v · 0 is ±0 for a finite v and NaN for NaN or ±∞: the sum of them is NaN once any value is.
  Floats poison(0.0f);
  std::size_t i = 0;
  for (; i + simd::kWidth <= count; i += simd::kWidth) {
    const Floats v = Floats::load_unaligned(data + i);
    largest = xsimd::max(largest, xsimd::abs(v));
    poison += v * Floats(0.0f);
  }
  FiniteScan scan = finite_scan_reference(values.subspan(i));
  scan.max_abs = std::max(scan.max_abs, xsimd::reduce_max(largest));
  scan.finite = scan.finite && xsimd::reduce_add(poison) == 0.0f;
  return scan;
#else
  return finite_scan_reference(values);
#endif
}

}  // namespace attn
