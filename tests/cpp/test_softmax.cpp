// Tests of the stable softmax: the reference, row sums, exact zeros, all-masked rows, huge logits.
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "approx.hpp"
#include "attention/ops/simd.hpp"
#include "attention/ops/softmax.hpp"
#include "attention/reference.hpp"

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
}

TEST_CASE("softmax_rows equals the reference and rows sum to 1", "[softmax]") {
  std::uint32_t seed = 100;
  for (std::size_t cols = 1; cols <= 2 * attn::simd::kWidth + 1; ++cols) {
    for (double spread : {0.1, 1.0, 10.0}) {
      const std::size_t rows = 3;
      auto got = random_floats(rows * cols, seed++, spread);
      auto want = got;
      attn::softmax_rows(attn::MatView(got.data(), rows, cols));
      attn::reference::softmax_rows(attn::MatView(want.data(), rows, cols));
      require_close(got, want, 1e-7, 2e-6, "cols=" + std::to_string(cols));
      for (std::size_t r = 0; r < rows; ++r) {
        double sum = 0.0;
        for (std::size_t c = 0; c < cols; ++c) sum += got[r * cols + c];
        REQUIRE(std::abs(sum - 1.0) <= 1e-6);
      }
    }
  }
}

TEST_CASE("masked entries get exactly 0 and an all-masked row gives zeros, not NaN", "[softmax]") {
  std::vector<float> x = {1.0f,  -kInf, 2.0f,  -kInf, 0.5f,    // row 0: some masked
                          -kInf, -kInf, -kInf, -kInf, -kInf};  // row 1: all masked
  attn::softmax_rows(attn::MatView(x.data(), 2, 5));
  REQUIRE(x[1] == 0.0f);
  REQUIRE(x[3] == 0.0f);
  REQUIRE(std::abs(x[0] + x[2] + x[4] - 1.0f) <= 1e-6f);
  for (std::size_t j = 5; j < 10; ++j) REQUIRE(x[j] == 0.0f);
}

TEST_CASE("logits of ±1e4 stay finite and pick the maximum", "[softmax]") {
  std::vector<float> x = {1e4f, -1e4f, 9990.0f, 0.0f, -1e4f, -1e4f, 1e4f, 1e4f};
  attn::softmax_rows(attn::MatView(x.data(), 2, 4));
  for (float v : x) REQUIRE(std::isfinite(v));
  const double runner_up = std::exp(-10.0);  // 9990 is 10 below the maximum
  REQUIRE(std::abs(x[0] - 1.0 / (1.0 + runner_up)) <= 1e-6);
  REQUIRE(std::abs(x[2] - runner_up / (1.0 + runner_up)) <= 1e-7);
  REQUIRE(x[1] == 0.0f);  // e^{-2e4} underflows to exactly 0
  REQUIRE(x[3] == 0.0f);
  REQUIRE(std::abs(x[6] - 0.5f) <= 1e-6f);
  REQUIRE(std::abs(x[7] - 0.5f) <= 1e-6f);
}

TEST_CASE("softmax_rows respects the view's stride", "[softmax]") {
  std::vector<float> store = {0.0f, 1.0f, 7.0f, 2.0f, 3.0f, 7.0f};  // 2 x 2 inside 2 x 3
  attn::softmax_rows(attn::MatView(store.data(), 2, 2, 3));
  REQUIRE(store[2] == 7.0f);
  REQUIRE(store[5] == 7.0f);
  const float p = float(1.0 / (1.0 + std::exp(1.0)));
  REQUIRE(std::abs(store[0] - p) <= 1e-6f);
  REQUIRE(std::abs(store[3] - p) <= 1e-6f);
}
