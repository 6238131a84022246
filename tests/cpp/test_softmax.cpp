// Tests of the stable softmax: the reference, row sums, exact zeros, all-masked rows, huge logits.
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "approx.hpp"
#include "attention/ops/simd.hpp"
#include "attention/ops/softmax.hpp"

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

namespace {
// Reference logits + softmax of one row block, in double: scale, ALiBi, mask.
std::vector<float> reference_fused(const std::vector<float>& scores, std::size_t rows,
                                   std::size_t cols, std::size_t first_query,
                                   const attn::LogitParams& p) {
  std::vector<float> out(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t i = first_query + r;
    std::vector<float> row(cols);
    for (std::size_t j = 0; j < cols; ++j) {
      const bool visible = !p.mask || attn::is_visible(*p.mask, i, j, cols);
      const double bias = p.alibi ? -double(p.alibi_slope) * std::abs(double(i) - double(j)) : 0;
      row[j] = visible ? float(double(scores[r * cols + j]) * p.scale + bias) : -kInf;
    }
    attn::reference::softmax_rows(attn::MatView(row.data(), 1, cols));
    std::copy(row.begin(), row.end(), out.begin() + r * cols);
  }
  return out;
}
}  // namespace

TEST_CASE("scale_mask_softmax_rows equals scale, ALiBi, mask and softmax done apart", "[softmax]") {
  std::uint32_t seed = 700;
  for (std::size_t cols : {1u, 3u, 4u, 5u, 8u, 17u, 64u, 65u}) {
    for (int kind = 0; kind < 5; ++kind) {
      attn::MaskSpec mask;
      mask.kind = kind == 1   ? attn::MaskKind::Causal
                  : kind == 2 ? attn::MaskKind::SlidingWindow
                  : kind == 3 ? attn::MaskKind::PrefixLM
                              : attn::MaskKind::None;
      mask.window = 3;
      mask.prefix = 2;
      if (kind == 4) {  // holes: padding (first key of all) and a hidden cell
        mask.key_padding.assign(cols, 0);
        mask.key_padding[0] = 1;
      }
      for (bool alibi : {false, true}) {
        const std::size_t rows = 6, first_query = 3;
        attn::LogitParams p;
        p.scale = 0.35f;
        p.alibi = alibi;
        p.alibi_slope = 0.5f;
        p.mask = &mask;
        const auto scores = random_floats(rows * cols, seed++, 3.0);
        auto got = scores;
        attn::scale_mask_softmax_rows(attn::MatView(got.data(), rows, cols), first_query, p);
        const auto want = reference_fused(scores, rows, cols, first_query, p);
        require_close(got, want, 1e-7, 2e-6,
                      "cols=" + std::to_string(cols) + " kind=" + std::to_string(kind));
        for (std::size_t c = 0; c < got.size(); ++c) {  // hidden keys: exactly 0
          if (!attn::is_visible(mask, first_query + c / cols, c % cols, cols)) {
            REQUIRE(got[c] == 0.0f);
          }
        }
      }
    }
  }
}

TEST_CASE("scale_mask_softmax_rows: fully masked rows are zeros, ±1e4 logits stay finite",
          "[softmax]") {
  attn::MaskSpec mask;
  mask.key_padding = {1, 1, 1, 1, 1};  // every key padded
  attn::LogitParams p;
  p.mask = &mask;
  std::vector<float> x(3 * 5, 1.0f);
  attn::scale_mask_softmax_rows(attn::MatView(x.data(), 3, 5), 0, p);
  for (float v : x) REQUIRE(v == 0.0f);

  std::vector<float> big = {1e4f, -1e4f, 9990.0f, 0.0f, -1e4f, -1e4f, 1e4f, 1e4f};
  attn::LogitParams plain;
  attn::scale_mask_softmax_rows(attn::MatView(big.data(), 2, 4), 0, plain);
  for (float v : big) REQUIRE(std::isfinite(v));
  const double runner_up = std::exp(-10.0);
  REQUIRE(std::abs(big[0] - 1.0 / (1.0 + runner_up)) <= 1e-6);
  REQUIRE(big[1] == 0.0f);
  REQUIRE(std::abs(big[6] - 0.5f) <= 1e-6f);

  // Causal with the diagonal only for query 0: one visible key gets weight exactly 1.
  attn::MaskSpec causal;
  causal.kind = attn::MaskKind::Causal;
  p.mask = &causal;
  std::vector<float> row = {-1e4f, 5.0f, 6.0f, 7.0f, 8.0f};
  attn::scale_mask_softmax_rows(attn::MatView(row.data(), 1, 5), 0, p);
  REQUIRE(row == std::vector<float>{1.0f, 0.0f, 0.0f, 0.0f, 0.0f});
}
