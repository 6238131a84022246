// Elementwise closeness checks with relative + absolute tolerances, reporting the worst index.
#pragma once

#include <catch2/catch_test_macros.hpp>

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
