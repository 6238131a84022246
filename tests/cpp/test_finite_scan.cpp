// finite_scan (vectorized) against finite_scan_reference and against the values themselves.
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "attention/ops/finite_scan.hpp"

namespace {

std::vector<float> random_values(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> values(count);
  for (float& v : values) v = normal(rng);
  return values;
}

float largest_magnitude(const std::vector<float>& values) {
  float largest = 0.0f;
  for (const float v : values) largest = std::abs(v) > largest ? std::abs(v) : largest;
  return largest;
}

}  // namespace

TEST_CASE("finite_scan finds the largest magnitude of finite values at any length",
          "[finite_scan]") {
  for (std::size_t count : {0, 1, 3, 4, 5, 15, 16, 17, 63, 64, 1000, 1027}) {
    auto values = random_values(count, static_cast<unsigned>(count));
    if (count > 2) values[count - 1] = -1e30f;  // the largest, negative, in the tail
    const attn::FiniteScan scan = attn::finite_scan(values);
    const attn::FiniteScan reference = attn::finite_scan_reference(values);
    INFO("count " << count);
    REQUIRE(scan.finite);
    REQUIRE(reference.finite);
    REQUIRE(scan.max_abs == largest_magnitude(values));
    REQUIRE(reference.max_abs == largest_magnitude(values));
  }
  REQUIRE(attn::finite_scan(std::vector<float>{-0.0f, 0.0f}).max_abs == 0.0f);
  REQUIRE(attn::finite_scan(std::vector<float>{std::numeric_limits<float>::max()}).max_abs ==
          std::numeric_limits<float>::max());
}

TEST_CASE("finite_scan flags one NaN or infinity wherever it is", "[finite_scan]") {
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity()};
  for (std::size_t count : {1, 7, 16, 33, 100}) {
    for (std::size_t at = 0; at < count; at += 3) {
      for (const float b : bad) {
        auto values = random_values(count, 5);
        values[at] = b;
        INFO("count " << count << ", " << b << " at " << at);
        REQUIRE_FALSE(attn::finite_scan(values).finite);
        REQUIRE_FALSE(attn::finite_scan_reference(values).finite);
      }
    }
  }
}
