// Tests of the positional encodings: NumPy's sinusoidal table, RoPE's relative property, ALiBi.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <vector>

#include "approx.hpp"
#include "attention/ops/positional.hpp"
#include "test_support.hpp"

TEST_CASE("sinusoidal encoding equals seed 004's NumPy table", "[positional]") {
  const auto data = load_test_data("numpy/seed004_positional.safetensors");
  const auto want = data.f64("PE");  // positional_encoding(50, 64)
  attn::Matrix pe(50, 64);
  attn::sinusoidal_encoding(pe);
  require_close(values(pe), want, 1e-7, 1e-6, "PE");
}

TEST_CASE("learned encoding: row p does not depend on n, and seeds differ", "[positional]") {
  attn::Matrix short_table(3, 8), long_table(10, 8), other(3, 8);
  attn::learned_encoding(short_table, 7);
  attn::learned_encoding(long_table, 7);
  attn::learned_encoding(other, 8);
  for (std::size_t i = 0; i < short_table.size(); ++i) {
    REQUIRE(short_table.data()[i] == long_table.data()[i]);
  }
  REQUIRE(short_table(0, 0) != other(0, 0));
}

TEST_CASE("RoPE keeps norms and makes q·k depend only on the offset", "[positional]") {
  const std::size_t positions = 9, d = 8;
  const auto q = random_floats(d, 1), k = random_floats(d, 2);
  attn::Matrix qs(positions, d), ks(positions, d);
  for (std::size_t p = 0; p < positions; ++p) {
    std::copy(q.begin(), q.end(), qs.row(p));
    std::copy(k.begin(), k.end(), ks.row(p));
  }
  attn::apply_rope(qs);
  attn::apply_rope(ks);
  auto dot = [&](const float* a, const float* b) {
    double s = 0;
    for (std::size_t c = 0; c < d; ++c) s += double(a[c]) * b[c];
    return s;
  };
  REQUIRE(std::abs(dot(qs.row(5), qs.row(5)) - dot(q.data(), q.data())) < 1e-4);
  for (std::size_t offset = 0; offset < 4; ++offset) {
    const double first = dot(qs.row(offset), ks.row(0));
    for (std::size_t m = offset; m < positions; ++m) {
      REQUIRE(std::abs(dot(qs.row(m), ks.row(m - offset)) - first) < 1e-4);
    }
  }
  // position 0 is not rotated
  for (std::size_t c = 0; c < d; ++c) REQUIRE(qs(0, c) == q[c]);
  attn::Matrix odd(2, 3);
  REQUIRE_THROWS_WITH(attn::apply_rope(odd), Catch::Matchers::ContainsSubstring("even d_k"));
}

TEST_CASE("RoPE rotate_half (Llama's convention): pair i is (x_i, x_{i+d_k/2}), base as given",
          "[positional]") {
  // transformers' eager code: q·cos + rotate_half(q)·sin, rotate_half(q) = cat(−q2, q1),
  // cos/sin = cat(freqs, freqs), freqs = t · base^(−2i/d_k). Written out for d_k 4, t 1.
  const std::vector<float> x{1.0f, 2.0f, 3.0f, 4.0f};
  attn::Matrix rows(2, 4);
  for (std::size_t t = 0; t < 2; ++t) std::copy(x.begin(), x.end(), rows.row(t));
  attn::apply_rope(rows, attn::RopePairing::RotateHalf, 500000.0);
  for (std::size_t c = 0; c < 4; ++c) REQUIRE(rows(0, c) == x[c]);  // t = 0: unchanged
  const double f0 = 1.0, f1 = std::pow(500000.0, -0.5);
  const double expected[4] = {
      1.0 * std::cos(f0) - 3.0 * std::sin(f0), 2.0 * std::cos(f1) - 4.0 * std::sin(f1),
      3.0 * std::cos(f0) + 1.0 * std::sin(f0), 4.0 * std::cos(f1) + 2.0 * std::sin(f1)};
  for (std::size_t c = 0; c < 4; ++c) REQUIRE(std::abs(rows(1, c) - expected[c]) < 1e-6);
  // The interleaved convention pairs (0, 1) and (2, 3) instead: different numbers.
  attn::Matrix interleaved(2, 4);
  for (std::size_t t = 0; t < 2; ++t) std::copy(x.begin(), x.end(), interleaved.row(t));
  attn::apply_rope(interleaved, attn::RopePairing::Interleaved, 500000.0);
  REQUIRE(std::abs(interleaved(1, 0) - (1.0 * std::cos(f0) - 2.0 * std::sin(f0))) < 1e-6);
  REQUIRE(std::abs(interleaved(1, 0) - rows(1, 0)) > 0.1);
}

TEST_CASE("ALiBi slopes follow the paper, and the bias is -m|i-j|", "[positional]") {
  const auto eight = attn::alibi_slopes(8);
  for (std::size_t h = 0; h < 8; ++h) REQUIRE(eight[h] == float(std::pow(2.0, -double(h + 1))));
  // 6 heads: the 4-head slopes 2^-2, 2^-4, 2^-6, 2^-8, then every other 8-head slope: 2^-1, 2^-3
  const std::vector<float> six_want = {0.25f, 0.0625f, 0.015625f, 0.00390625f, 0.5f, 0.125f};
  REQUIRE(attn::alibi_slopes(6) == six_want);
  attn::Matrix bias(3, 4);
  attn::alibi_bias(bias, 0.5f);
  REQUIRE(bias(0, 0) == 0.0f);
  REQUIRE(bias(0, 3) == -1.5f);
  REQUIRE(bias(2, 0) == -1.0f);
}

TEST_CASE("positional names round-trip and unknown names are rejected", "[positional]") {
  for (auto kind :
       {attn::PositionalKind::None, attn::PositionalKind::Sinusoidal, attn::PositionalKind::Learned,
        attn::PositionalKind::Rope, attn::PositionalKind::Alibi}) {
    REQUIRE(attn::parse_positional_kind(attn::positional_kind_name(kind)) == kind);
  }
  REQUIRE_THROWS_WITH(attn::parse_positional_kind("absolute"),
                      Catch::Matchers::ContainsSubstring("'absolute'"));
}
