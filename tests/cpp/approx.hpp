// Elementwise closeness checks with relative + absolute tolerances, reporting the worst index.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include "attention/rng.hpp"
#include "attention/tensor.hpp"

// Requires |got[i] - want[i]| <= atol + rtol * |want[i]| for every i (and equal sizes); on
// failure reports the first offending index and the largest error. Infinities must match.
template <class Got, class Want>
void require_close(const Got& got, const Want& want, double atol, double rtol,
                   const std::string& what) {
  INFO(what);
  REQUIRE(std::size(got) == std::size(want));
  std::size_t bad = std::size(got);
  double worst = 0.0;
  std::size_t i = 0;
  auto w_it = std::begin(want);
  for (auto g_it = std::begin(got); g_it != std::end(got); ++g_it, ++w_it, ++i) {
    const double g = static_cast<double>(*g_it);
    const double w = static_cast<double>(*w_it);
    if (std::isinf(w) || std::isinf(g)) {
      if (g != w && bad == std::size(got)) bad = i;
      continue;
    }
    const double err = std::abs(g - w);
    worst = std::max(worst, err);
    if (!(err <= atol + rtol * std::abs(w)) && bad == std::size(got)) bad = i;
  }
  if (bad != std::size(got)) {
    std::ostringstream msg;
    msg.precision(9);
    msg << what << ": index " << bad << " got " << double(std::begin(got)[bad]) << " want "
        << double(std::begin(want)[bad]) << " (largest abs error " << worst << ", atol " << atol
        << ", rtol " << rtol << ")";
    FAIL(msg.str());
  }
  SUCCEED();
}

// Two of the layer's paths that sum the same terms in the same order with the SIMD kernels
// (ATTN_SIMD=1), and so give the same bits there: an untraced head's fused scale-mask-softmax and
// a traced head's step-by-step one. With the scalar kernels (ATTN_SIMD=0, the wasm-nosimd
// build's) the step-by-step softmax is the float64 reference::softmax_rows, which rounds each
// weight once, while the fused one rounds e^x, their sum and 1/sum to float32: the weights differ
// by a few float32 ulps, and what is computed from them (a head's context, the concatenated
// heads, the output) by float32 rounding. There the two must agree within 1e-6 + 1e-5·|want|
// (~80 float32 ulps of an O(1) value; another head's, mask's or weight's result is off by 1e-2
// or more).
template <class Got, class Want>
void require_same_across_paths(const Got& got, const Want& want, const std::string& what) {
#if ATTN_SIMD
  INFO(what << " (SIMD kernels: bit for bit)");
  REQUIRE(std::equal(std::begin(got), std::end(got), std::begin(want), std::end(want)));
#else
  require_close(got, want, 1e-6, 1e-5, what + " (scalar kernels: to float32 rounding)");
#endif
}

// n standard-normal floats from a seeded NumPy-compatible generator.
inline std::vector<float> random_floats(std::size_t n, std::uint32_t seed, double scale = 1.0) {
  std::vector<float> values(n);
  attn::NumpyRandomState(seed).fill_randn(values, scale);
  return values;
}

// A matrix's values, row-major, as a vector (to compare with require_close or ==).
inline std::vector<float> values(const attn::Matrix& m) {
  return std::vector<float>(m.data(), m.data() + m.size());
}
