// Tests of the xsimd matmul, transpose and A·Bᵀ against the scalar reference.
#include <catch2/catch_test_macros.hpp>

#include <vector>

#include "approx.hpp"
#include "attention/ops/matmul.hpp"
#include "attention/ops/simd.hpp"

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
  attn::PackedMatrix packed;
  attn::matmul_transposed(attn::ConstMatView(a.data(), m, k), attn::ConstMatView(b.data(), n, k),
                          attn::MatView(got.data(), m, n), packed);
  attn::reference::matmul(attn::ConstMatView(a.data(), m, k), attn::ConstMatView(b_t.data(), k, n),
                          attn::MatView(want.data(), m, n));
  require_close(got, want, tolerance_for(k), 1e-5, "A·Bᵀ");
}

TEST_CASE("matmul_packed: odd shapes, strided views, k blocks, bias and accumulation", "[matmul]") {
  std::uint32_t seed = 300;
  const std::size_t pad = 3;
  for (std::size_t m : {1u, 3u, 4u, 5u, 15u, 17u, 63u, 65u, 130u}) {
    for (std::size_t n : {1u, 7u, 8u, 9u, 17u, 33u}) {
      for (std::size_t k : {1u, 5u, 64u, 257u, 600u}) {
        if (m * n * k > 2000000) continue;
        // A and C are column blocks of wider matrices starting one float in (misaligned).
        const auto a_store = random_floats(m * (k + pad) + 1, seed++);
        const auto b = random_floats(k * n, seed++);
        const auto bias = random_floats(n, seed++);
        const attn::ConstMatView a(a_store.data() + 1, m, k, k + pad);
        attn::PackedMatrix packed;
        attn::pack_matrix(attn::ConstMatView(b.data(), k, n), packed);
        for (int mode = 0; mode < 3; ++mode) {  // plain, bias, accumulate onto C
          std::vector<float> c_store(m * (n + pad) + 1, 0.5f);
          const attn::MatView c(c_store.data() + 1, m, n, n + pad);
          attn::matmul_packed(a, packed, 0, 0, c, mode == 1 ? bias.data() : nullptr, mode == 2);
          std::vector<float> want(m * n);
          attn::reference::matmul(a, attn::ConstMatView(b.data(), k, n),
                                  attn::MatView(want.data(), m, n),
                                  mode == 1 ? bias.data() : nullptr);
          std::vector<float> got;
          for (std::size_t i = 0; i < m; ++i) {
            for (std::size_t j = 0; j < n; ++j) got.push_back(c(i, j) - (mode == 2 ? 0.5f : 0.0f));
            for (std::size_t j = n; j < n + pad && i + 1 < m; ++j) REQUIRE(c.row(i)[j] == 0.5f);
          }
          REQUIRE(c_store[0] == 0.5f);
          require_close(got, want, tolerance_for(k), 1e-5,
                        "m=" + std::to_string(m) + " n=" + std::to_string(n) +
                            " k=" + std::to_string(k) + " mode=" + std::to_string(mode));
        }
      }
    }
  }
}

TEST_CASE("pack_transposed packs Bᵀ from B's rows: A·Bᵀ equals the reference", "[matmul]") {
  for (std::size_t n : {1u, 8u, 13u, 40u}) {
    for (std::size_t k : {1u, 6u, 64u}) {
      const std::size_t m = 11;
      const auto a = random_floats(m * k, std::uint32_t(n * 100 + k));
      const auto b = random_floats(n * (k + 2), std::uint32_t(n * 100 + k + 1));  // strided rows
      std::vector<float> b_t(k * n);
      for (std::size_t r = 0; r < n; ++r) {
        for (std::size_t c = 0; c < k; ++c) b_t[c * n + r] = b[r * (k + 2) + c];
      }
      attn::PackedMatrix packed;
      attn::pack_transposed(attn::ConstMatView(b.data(), n, k, k + 2), packed);
      REQUIRE(packed.rows == k);
      REQUIRE(packed.cols == n);
      std::vector<float> got(m * n), want(m * n);
      attn::matmul_packed(attn::ConstMatView(a.data(), m, k), packed,
                          attn::MatView(got.data(), m, n));
      attn::reference::matmul(attn::ConstMatView(a.data(), m, k),
                              attn::ConstMatView(b_t.data(), k, n),
                              attn::MatView(want.data(), m, n));
      require_close(got, want, tolerance_for(k), 1e-5, "n=" + std::to_string(n));
    }
  }
}

TEST_CASE("matmul_packed over a column or k sub-range is bit-identical to the full product",
          "[matmul]") {
  // What the block-skipping attention relies on: C[:, cols] of a sub-product equals the full
  // product's, and leading k terms with A = 0 change nothing.
  const std::size_t m = 37, k = 700, n = 5 * attn::kPanelWidth + 3;  // k: two k blocks
  auto a = random_floats(m * k, 41);
  const auto b = random_floats(k * n, 42);
  const std::size_t k_skip = 77;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t p = 0; p < k_skip; ++p) a[i * k + p] = 0.0f;
  }
  attn::PackedMatrix packed;
  attn::pack_matrix(attn::ConstMatView(b.data(), k, n), packed);
  std::vector<float> full(m * n), part(m * n, -1.0f);
  attn::matmul_packed(attn::ConstMatView(a.data(), m, k), packed, attn::MatView(full.data(), m, n));
  const std::size_t col0 = 2 * attn::kPanelWidth;
  attn::matmul_packed(attn::ConstMatView(a.data() + k_skip, m, k - k_skip, k), packed, k_skip, col0,
                      attn::MatView(part.data() + col0, m, n - col0, n));
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      INFO("i=" << i << " j=" << j);
      if (j < col0) {
        REQUIRE(part[i * n + j] == -1.0f);  // columns before col_first untouched
      } else {
        REQUIRE(part[i * n + j] == full[i * n + j]);
      }
    }
  }
}
