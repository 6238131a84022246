// Tests of the xsimd matmul, transpose and A·Bᵀ against the scalar reference.
#include <catch2/catch_test_macros.hpp>

#include <vector>

#include "approx.hpp"
#include "attention/ops/matmul.hpp"
#include "attention/ops/simd.hpp"
#include "attention/reference.hpp"

namespace {
// The sizes that exercise every tile and tail path: 1 … 2·width+1 and some odd ones.
std::vector<std::size_t> edge_sizes() {
  std::vector<std::size_t> sizes;
  for (std::size_t s = 1; s <= 2 * attn::simd::kWidth + 1; ++s) sizes.push_back(s);
  for (std::size_t s : {5u, 17u, 33u, 67u}) sizes.push_back(s);
  return sizes;
}
double tolerance_for(std::size_t k) {
  return 2e-6 * double(k);
}
}  // namespace

TEST_CASE("matmul equals the reference for every edge size, with and without bias", "[matmul]") {
  std::uint32_t seed = 1;
  for (std::size_t m : edge_sizes()) {
    for (std::size_t n : edge_sizes()) {
      for (std::size_t k : {1u, 3u, 8u, 19u}) {
        const auto a = random_floats(m * k, seed++);
        const auto b = random_floats(k * n, seed++);
        const auto bias = random_floats(n, seed++);
        for (const float* bias_ptr : {static_cast<const float*>(nullptr), bias.data()}) {
          std::vector<float> got(m * n), want(m * n);
          attn::matmul(attn::ConstMatView(a.data(), m, k), attn::ConstMatView(b.data(), k, n),
                       attn::MatView(got.data(), m, n), bias_ptr);
          attn::reference::matmul(attn::ConstMatView(a.data(), m, k),
                                  attn::ConstMatView(b.data(), k, n),
                                  attn::MatView(want.data(), m, n), bias_ptr);
          require_close(
              got, want, tolerance_for(k), 1e-5,
              "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
        }
      }
    }
  }
}

TEST_CASE("matmul works on strided, misaligned views and leaves the rest alone", "[matmul]") {
  const std::size_t m = 7, k = 13, n = 11, pad = 5;
  // A, B and C are column blocks of wider matrices starting one float in (misaligned).
  auto a_store = random_floats(m * (k + pad) + 1, 11);
  auto b_store = random_floats(k * (n + pad) + 1, 12);
  attn::ConstMatView a(a_store.data() + 1, m, k, k + pad);
  attn::ConstMatView b(b_store.data() + 1, k, n, n + pad);
  std::vector<float> c_store(m * (n + pad) + 1, 42.0f);
  attn::MatView c(c_store.data() + 1, m, n, n + pad);
  attn::matmul(a, b, c);
  std::vector<float> want(m * n);
  attn::reference::matmul(a, b, attn::MatView(want.data(), m, n));
  std::vector<float> got;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) got.push_back(c(i, j));
    for (std::size_t j = n; j < n + pad && i + 1 < m; ++j) REQUIRE(c.row(i)[j] == 42.0f);
  }
  REQUIRE(c_store[0] == 42.0f);
  require_close(got, want, tolerance_for(k), 1e-5, "strided matmul");
}

TEST_CASE("transpose and matmul_transposed", "[matmul]") {
  const std::size_t m = 9, k = 6, n = 21;
  const auto a = random_floats(m * k, 21);
  const auto b = random_floats(n * k, 22);  // [n, k]
  std::vector<float> b_t(k * n);
  attn::transpose(attn::ConstMatView(b.data(), n, k), attn::MatView(b_t.data(), k, n));
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < k; ++c) REQUIRE(b_t[c * n + r] == b[r * k + c]);
  }
  std::vector<float> got(m * n), want(m * n);
  attn::AlignedVector<float> packed;
  attn::matmul_transposed(attn::ConstMatView(a.data(), m, k), attn::ConstMatView(b.data(), n, k),
                          attn::MatView(got.data(), m, n), packed);
  attn::reference::matmul(attn::ConstMatView(a.data(), m, k), attn::ConstMatView(b_t.data(), k, n),
                          attn::MatView(want.data(), m, n));
  require_close(got, want, tolerance_for(k), 1e-5, "A·Bᵀ");
}
