// NumpyRandomState against numpy.random.RandomState streams recorded in tests/data/numpy.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "attention/rng.hpp"
#include "test_support.hpp"

namespace {

// Index of the first element where a and b differ (as ==), or the common size if none does.
template <typename T>
std::size_t first_mismatch(const std::vector<T>& a, const std::vector<T>& b) {
  const std::size_t n = a.size() < b.size() ? a.size() : b.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (!(a[i] == b[i])) return i;
  }
  return n;
}

const std::vector<std::uint32_t> kStreamSeeds = {0U, 1U, 42U, 123456789U, 4294967295U};

}  // namespace

TEST_CASE("RandomState(0).randn() starts with NumPy's known first value", "[rng]") {
  attn::NumpyRandomState rng(0);
  CHECK(rng.randn() == 1.764052345967664);
  CHECK(rng.randn() == 0.4001572083672233);  // the cached second value of the first pair
}

TEST_CASE("next_u32 is MT19937 seeded by init_genrand", "[rng]") {
  for (std::uint32_t seed : {0U, 1U, 5489U, 4294967295U}) {
    attn::NumpyRandomState rng(seed);
    std::mt19937 reference(seed);
    bool same = true;
    for (int i = 0; i < 2000 && same; ++i) same = rng.next_u32() == reference();
    INFO("seed " << seed);
    CHECK(same);
  }
  attn::NumpyRandomState rng(5489);
  CHECK(rng.next_u32() == 3499211612U);  // MT19937's published first output for 5489
}

TEST_CASE("randn equals RandomState(seed).randn(2000) bit for bit", "[rng]") {
  const auto data = attn::safetensors::File::parse(
      read_file(std::string(ATTN_TEST_DATA_DIR) + "/numpy/randn_streams.safetensors"));
  for (std::uint32_t seed : kStreamSeeds) {
    const std::vector<double> expected = data.f64("seed_" + std::to_string(seed));
    REQUIRE(expected.size() == 2000);
    INFO("seed " << seed);

    std::vector<double> filled(expected.size());
    attn::NumpyRandomState a(seed);
    a.fill_randn(filled);
    const std::size_t bad = first_mismatch(filled, expected);
    INFO("first mismatch at " << bad);
    CHECK(bad == expected.size());

    std::vector<double> one_by_one(expected.size());
    attn::NumpyRandomState b(seed);
    for (double& v : one_by_one) v = b.randn();
    CHECK(one_by_one == expected);
  }
}

TEST_CASE("randn's log is glibc's FMA log on every platform", "[rng]") {
  // NumPy's legacy_gauss uses the C library's log; the data were made with glibc on an x86-64
  // CPU with FMA. musl (wasm) and glibc without FMA round log differently here, which moves
  // this pair by one ulp; NumpyRandomState carries its own copy of glibc's FMA log.
  attn::NumpyRandomState rng(123456789);
  std::vector<double> v(474);
  rng.fill_randn(v);
  CHECK(v[472] == 0.42241063828084674);
  CHECK(v[473] == 0.7066273884799734);
}

TEST_CASE("fill_randn into float is float(randn() * scale)", "[rng]") {
  const auto data = load_test_data("numpy/randn_streams.safetensors");
  const std::vector<double> expected = data.f64("seed_42");
  for (double scale : {1.0, 0.1, -2.5}) {
    std::vector<float> want(expected.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      want[i] = static_cast<float>(expected[i] * scale);
    }
    std::vector<float> got(expected.size());
    attn::NumpyRandomState rng(42);
    rng.fill_randn(got, scale);
    INFO("scale " << scale << ", first mismatch at " << first_mismatch(got, want));
    CHECK(got == want);
  }
  std::vector<float> got(5);
  attn::NumpyRandomState rng(42);
  rng.fill_randn(got);  // default scale 1
  CHECK(got[0] == static_cast<float>(expected[0]));
  CHECK(got[4] == static_cast<float>(expected[4]));
}

TEST_CASE("random_sample equals RandomState(7).random_sample(1000)", "[rng]") {
  const auto data = load_test_data("numpy/randn_streams.safetensors");
  const std::vector<double> expected = data.f64("random_sample_seed_7");
  REQUIRE(expected.size() == 1000);
  std::vector<double> got(expected.size());
  attn::NumpyRandomState rng(7);
  for (double& v : got) v = rng.random_sample();
  INFO("first mismatch at " << first_mismatch(got, expected));
  CHECK(got == expected);
  for (double v : got) {
    CHECK(v >= 0.0);
    CHECK(v < 1.0);
  }
}

TEST_CASE("fill_uniform equals float(RandomState(3).uniform(-0.5, 0.5, 1000))", "[rng]") {
  const auto data = load_test_data("numpy/randn_streams.safetensors");
  const std::vector<double> expected = data.f64("uniform_seed_3");
  REQUIRE(expected.size() == 1000);
  std::vector<float> want(expected.size());
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = static_cast<float>(expected[i]);
  std::vector<float> got(expected.size());
  attn::NumpyRandomState rng(3);
  rng.fill_uniform(got, -0.5, 0.5);
  INFO("first mismatch at " << first_mismatch(got, want));
  CHECK(got == want);
}

TEST_CASE("the cached second Gaussian carries across calls of odd length", "[rng]") {
  const auto data = load_test_data("numpy/randn_streams.safetensors");
  const std::vector<double> expected = data.f64("seed_1");

  SECTION("odd-sized fills concatenate to the single stream") {
    // RandomState(1).randn(1), .randn(3), .randn(5), ... continue one stream, because the
    // unused second value of a pair is kept for the next call.
    attn::NumpyRandomState rng(1);
    std::vector<double> got;
    std::size_t count = 1;
    while (got.size() < expected.size()) {
      std::vector<double> chunk(std::min(count, expected.size() - got.size()));
      rng.fill_randn(chunk);
      got.insert(got.end(), chunk.begin(), chunk.end());
      count += 2;
    }
    INFO("first mismatch at " << first_mismatch(got, expected));
    CHECK(got == expected);
  }

  SECTION("mixing double and float fills keeps one stream") {
    attn::NumpyRandomState rng(1);
    std::vector<double> first(3);
    std::vector<float> second(7);
    rng.fill_randn(first);
    rng.fill_randn(second);
    CHECK(first[2] == expected[2]);
    CHECK(second[0] == static_cast<float>(expected[3]));  // the cached value of pair 2
    CHECK(second[6] == static_cast<float>(expected[9]));
    CHECK(rng.randn() == expected[10]);
  }

  SECTION("random_sample between Gaussians leaves the cached value in place") {
    // NumPy keeps has_gauss apart from the bit generator: the cached value survives.
    attn::NumpyRandomState rng(1);
    CHECK(rng.randn() == expected[0]);
    const double u = rng.random_sample();
    CHECK(u >= 0.0);
    CHECK(u < 1.0);
    CHECK(rng.randn() == expected[1]);
    CHECK(rng.randn() != expected[2]);  // the next pair starts after the extra draws
  }
}

TEST_CASE("distinct seeds give distinct streams; the same seed repeats", "[rng]") {
  std::vector<std::vector<double>> streams;
  for (std::uint32_t seed : kStreamSeeds) {
    std::vector<double> s(64);
    attn::NumpyRandomState rng(seed);
    rng.fill_randn(s);
    std::vector<double> again(64);
    attn::NumpyRandomState rng2(seed);
    rng2.fill_randn(again);
    CHECK(s == again);
    streams.push_back(std::move(s));
  }
  for (std::size_t i = 0; i < streams.size(); ++i) {
    for (std::size_t j = i + 1; j < streams.size(); ++j) {
      std::size_t equal = 0;
      for (std::size_t k = 0; k < streams[i].size(); ++k) equal += streams[i][k] == streams[j][k];
      INFO("seeds " << kStreamSeeds[i] << " and " << kStreamSeeds[j]);
      CHECK(equal == 0);
    }
  }
  attn::NumpyRandomState a(2), b(3);
  CHECK(a.next_u32() != b.next_u32());
}
