// Tests of the vectorized exp against double-precision std::exp.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attention/ops/exp.hpp"
#include "attention/ops/simd.hpp"
#include "attention/ops/softmax.hpp"

namespace {

// The largest |got[i] - e^x[i]| / e^x[i], with e^x in double.
double largest_relative_error(const std::vector<float>& x, const std::vector<float>& got) {
  double worst = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double want = std::exp(static_cast<double>(x[i]));
    worst = std::max(worst, std::abs(got[i] - want) / want);
  }
  return worst;
}

}  // namespace

TEST_CASE("exp_values is within 1e-6 relative error of exp in double", "[exp]") {
  // A dense sweep of every input where e^x is a normal float.
  std::vector<float> x;
  for (double v = -87.0; v <= 88.0; v += 0.00137) x.push_back(static_cast<float>(v));
  x.push_back(0.0f);
  x.push_back(-0.0f);
  x.push_back(1e-8f);
  std::vector<float> out(x.size());
  attn::exp_values(x.data(), out.data(), x.size());
  const double worst = largest_relative_error(x, out);
  INFO("largest relative error " << worst);
  REQUIRE(worst <= 1e-6);
}

TEST_CASE("exp_values maps -inf and very negative inputs to exactly 0", "[exp]") {
  std::vector<float> x = {-std::numeric_limits<float>::infinity(), -1e4f, -200.0f, -88.0f};
  std::vector<float> out(x.size(), 1.0f);
  attn::exp_values(x.data(), out.data(), x.size());
  for (float v : out) REQUIRE(v == 0.0f);
  float zero = 0.0f, one = 0.0f;
  attn::exp_values(&zero, &one, 1);
  REQUIRE(one == 1.0f);
}

TEST_CASE("exp_values handles every length and misaligned starts", "[exp]") {
  const std::size_t w = attn::simd::kWidth;
  std::vector<float> storage(4 * w + 8);
  for (std::size_t i = 0; i < storage.size(); ++i) storage[i] = -3.0f + 0.37f * float(i);
  for (std::size_t offset = 0; offset < 3; ++offset) {
    for (std::size_t count = 1; count <= 2 * w + 1; ++count) {
      std::vector<float> out(count + 2, -1.0f);
      attn::exp_values(storage.data() + offset, out.data() + 1, count);
      REQUIRE(out[0] == -1.0f);          // nothing written before
      REQUIRE(out[count + 1] == -1.0f);  // nor after
      for (std::size_t i = 0; i < count; ++i) {
        const double want = std::exp(double(storage[offset + i]));
        REQUIRE(std::abs(out[i + 1] - want) <= 1e-6 * want);
      }
    }
  }
}

TEST_CASE("the softmax's exp (exp_shifted_sum) is within 1e-6 relative error for x <= 0", "[exp]") {
  std::vector<float> x;
  for (double v = -87.3; v <= 0.0; v += 0.000731) x.push_back(static_cast<float>(v));
  x.push_back(-0.0f);
  x.push_back(0.0f);
  x.push_back(-1e-8f);
  const std::vector<float> in = x;
  double want_sum = 0.0;
  for (float v : in) want_sum += std::exp(double(v));
  const float sum = attn::exp_shifted_sum(x.data(), x.size(), 0.0f);
  const double worst = largest_relative_error(in, x);
  INFO("largest relative error " << worst);
  REQUIRE(worst <= 1e-6);
  REQUIRE(std::abs(sum - want_sum) <= 1e-5 * want_sum);
}

TEST_CASE("the softmax's exp gives exactly 0 for -inf and below -87.7", "[exp]") {
  std::vector<float> x = {
      -std::numeric_limits<float>::infinity(), -1e4f, -200.0f, -88.0f, -87.7f, 0.0f,
      -std::numeric_limits<float>::infinity()};
  const float sum = attn::exp_shifted_sum(x.data(), x.size(), 0.0f);
  REQUIRE(sum == 1.0f);
  for (std::size_t i = 0; i < x.size(); ++i) REQUIRE(x[i] == (i == 5 ? 1.0f : 0.0f));
  // Shifted: e^{x - 1e4} for x = 1e4 is 1, the rest vanish.
  std::vector<float> big = {1e4f, -1e4f, 9990.0f};
  attn::exp_shifted_sum(big.data(), big.size(), 1e4f);
  REQUIRE(big[0] == 1.0f);
  REQUIRE(big[1] == 0.0f);
  REQUIRE(std::abs(big[2] - std::exp(-10.0)) <= 1e-6 * std::exp(-10.0));
}
