// Numerics at the edges: crafted logits of ±1e4 stay finite and pick the right keys, fully
// masked rows give zeros on both paths (weights kept or not), and values that are not finite or
// so large that float32 would overflow inside the forward are refused with a message instead of
// spreading NaN. tests/js/numerics.test.mjs checks the same through the wasm module.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "approx.hpp"
#include "attention/error.hpp"
#include "attention/layer/layer.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

// d_model 4, one head (d_k 4, scale 1/2), no biases: W_Q = 50·I, W_K = 100·I, W_V = W_O = I, so
// score(i, j) = 50 · 100 · (x_i · kv_j) / 2 = 2500 · (x_i · kv_j), exactly, and the output is the
// weighted sum of the kv rows.
attn::AttentionLayer crafted_layer() {
  attn::LayerConfig config;
  config.d_model = 4;
  config.heads = 1;
  config.bias = false;
  attn::AttentionLayer layer(config);
  attn::LayerWeights w;
  w.in_proj_weight.assign(12 * 4, 0.0f);
  w.out_proj_weight.assign(4 * 4, 0.0f);
  for (std::size_t i = 0; i < 4; ++i) {
    w.in_proj_weight[i * 4 + i] = 50.0f;         // W_Q
    w.in_proj_weight[(4 + i) * 4 + i] = 100.0f;  // W_K
    w.in_proj_weight[(8 + i) * 4 + i] = 1.0f;    // W_V
    w.out_proj_weight[i * 4 + i] = 1.0f;         // W_O
  }
  layer.set_weights(w);
  return layer;
}

// Queries (rows of x) and keys (rows of kv); x_i · kv_j ranges over -4 .. 4, so the scores reach
// ±1e4. Query 4 ties two keys at 7500.
const std::vector<float> kQueries = {1, 1,  1, 1, -1, -1, -1, -1, 1, -1,
                                     1, -1, 1, 1, -1, -1, 1,  1,  1, 0};
const std::vector<float> kKeys = {1, 1, 1, 1, -1, -1, -1, -1, 1, 1, 1, -1, 1, -1, 1, -1};
// softmax of 2500 · x_i · kv_j: exp(-2500) and smaller are 0 in float32.
const std::vector<float> kWeights = {1, 0, 0, 0, 0, 1, 0,    0, 0,    0,
                                     0, 1, 0, 0, 1, 0, 0.5f, 0, 0.5f, 0};

attn::ForwardOptions cross(std::size_t n, std::span<const float> kv, std::size_t kv_n) {
  attn::ForwardOptions options;
  options.n = n;
  options.cross = true;
  options.kv = kv;
  options.kv_n = kv_n;
  return options;
}

const attn::Step& step(const attn::Trace& trace, const std::string& id) {
  for (const auto& s : trace.steps) {
    if (s.id() == id) return s;
  }
  FAIL("no step " << id);
  throw 0;
}

float max_abs_of(const std::vector<float>& values) {
  float largest = 0.0f;
  for (float v : values) largest = std::max(largest, std::abs(v));
  return largest;
}

// Every weight finite in [0, 1], each row summing to 1; every output finite.
void require_probability_rows(const attn::ForwardResult& r, std::size_t kv_n) {
  for (std::size_t row = 0; row * kv_n < r.attention.size(); ++row) {
    double sum = 0.0;
    for (std::size_t j = 0; j < kv_n; ++j) {
      const float a = r.attention[row * kv_n + j];
      REQUIRE(std::isfinite(a));
      REQUIRE(a >= 0.0f);
      REQUIRE(a <= 1.0f);
      sum += a;
    }
    INFO("row " << row);
    REQUIRE(std::abs(sum - 1.0) <= 1e-6);
  }
  for (std::size_t i = 0; i < r.output.size(); ++i) REQUIRE(std::isfinite(r.output.data()[i]));
}

}  // namespace

TEST_CASE("crafted logits of ±1e4 stay finite, rows sum to 1 and the largest score wins",
          "[numerics]") {
  auto layer = crafted_layer();
  auto options = cross(5, kKeys, 4);
  options.want_trace = true;
  const auto& r = layer.forward(kQueries, options);
  const auto& scaled = step(r.trace, "scaled").data;
  CHECK(max_abs_of(scaled) == 1e4f);  // the scores really are ±1e4
  CHECK(*std::min_element(scaled.begin(), scaled.end()) == -1e4f);
  require_probability_rows(r, 4);
  require_close(r.attention, kWeights, 0.0, 1e-6, "weights");
  // output_i = Σ_j w_ij kv_j
  std::vector<float> expected(5 * 4, 0.0f);
  for (std::size_t i = 0; i < 5; ++i) {
    for (std::size_t j = 0; j < 4; ++j) {
      for (std::size_t c = 0; c < 4; ++c)
        expected[i * 4 + c] += kWeights[i * 4 + j] * kKeys[j * 4 + c];
    }
  }
  require_close(values(r.output), expected, 1e-6, 1e-6, "output");

  // Without the 1/√d_k scale the scores reach ±2e4: the same winners.
  options.scale = false;
  const auto& unscaled = layer.forward(kQueries, options);
  CHECK(max_abs_of(step(unscaled.trace, "scaled").data) == 2e4f);
  require_probability_rows(unscaled, 4);
  require_close(unscaled.attention, kWeights, 0.0, 1e-6, "weights without scaling");

  // The output-only path agrees.
  options.scale = true;
  options.want_trace = false;
  options.want_weights = false;
  require_close(values(layer.forward(kQueries, options).output), expected, 1e-6, 1e-6,
                "output, weights not kept");
}

TEST_CASE("a row whose every score is -1e4 is uniform, not zero or NaN", "[numerics]") {
  auto layer = crafted_layer();
  const std::vector<float> query = {1, 1, 1, 1};
  const std::vector<float> keys(3 * 4, -1.0f);  // three keys, each scoring -1e4
  auto options = cross(1, keys, 3);
  options.want_trace = true;
  const auto& r = layer.forward(query, options);
  CHECK(step(r.trace, "scaled").data == std::vector<float>(3, -1e4f));
  require_probability_rows(r, 3);
  require_close(r.attention, std::vector<float>(3, 1.0f / 3.0f), 0.0, 1e-6, "uniform");
  require_close(values(r.output), std::vector<float>(4, -1.0f), 1e-6, 1e-6, "mean of the keys");
}

TEST_CASE("fully masked rows give zero weights and a zero context on both paths", "[numerics]") {
  auto layer = crafted_layer();
  auto options = cross(5, kKeys, 4);
  options.mask.cells.assign(5 * 4, 0);
  for (std::size_t j = 0; j < 4; ++j) options.mask.cells[2 * 4 + j] = 1;  // query 2 sees nothing
  const auto kept = layer.forward(kQueries, options);  // a copy: the next forward reuses result_
  for (std::size_t j = 0; j < 4; ++j) CHECK(kept.attention[2 * 4 + j] == 0.0f);
  for (std::size_t c = 0; c < 4; ++c) CHECK(kept.output(2, c) == 0.0f);  // no bias: exactly 0
  for (std::size_t i : {0, 1, 3, 4}) {
    double sum = 0.0;
    for (std::size_t j = 0; j < 4; ++j) sum += kept.attention[i * 4 + j];
    CHECK(std::abs(sum - 1.0) <= 1e-6);
  }
  options.want_weights = false;
  const auto& output_only = layer.forward(kQueries, options);
  require_close(values(output_only.output), values(kept.output), 1e-6, 1e-6, "weights not kept");
  for (std::size_t c = 0; c < 4; ++c) CHECK(output_only.output(2, c) == 0.0f);
}

TEST_CASE("NaN and infinity in inputs or weights are reported, never spread", "[numerics]") {
  auto layer = crafted_layer();
  auto with = [](std::vector<float> v, std::size_t i, float value) {
    v[i] = value;
    return v;
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const auto x = with(kQueries, 6, nan);
  CHECK_THROWS_WITH(layer.forward(x, cross(5, kKeys, 4)),
                    ContainsSubstring("x[6] is NaN: values must be finite"));
  const auto kv = with(kKeys, 3, -inf);
  CHECK_THROWS_WITH(layer.forward(kQueries, cross(5, kv, 4)),
                    ContainsSubstring("kv[3] is infinite: values must be finite"));
  auto weights = layer.weights();
  weights.out_proj_weight[7] = nan;
  CHECK_THROWS_WITH(layer.set_weights(weights),
                    ContainsSubstring("out_proj.weight[7] is NaN: values must be finite"));
  // After the refusals the layer still gives the crafted answer.
  require_close(layer.forward(kQueries, cross(5, kKeys, 4)).attention, kWeights, 0.0, 1e-6,
                "after the errors");
}

TEST_CASE("finite values that would overflow float32 inside the forward are refused",
          "[numerics]") {
  auto layer = crafted_layer();
  // |x| = 1e18: Q reaches 5e19, K 1e20, and Q·Kᵀ 2e40 > float32's 3.4e38 (it would be inf, then
  // NaN or a row that looks fully masked).
  const std::vector<float> huge(4, 1e18f);
  CHECK_THROWS_WITH(
      layer.forward(huge, cross(1, huge, 1)),
      ContainsSubstring("values too large for float32: the attention scores Q·Kᵀ could reach") &&
          ContainsSubstring("more than the limit of 1e+37"));
  // W_Q and W_K of 1e30 (say, from a file): Q and K fit float32, Q·Kᵀ (about 1e60) does not.
  auto weights = layer.weights();
  const auto original = weights;
  for (std::size_t i = 0; i < 4; ++i) {
    weights.in_proj_weight[i * 4 + i] = 1e30f;
    weights.in_proj_weight[(4 + i) * 4 + i] = 1e30f;
  }
  layer.set_weights(weights);  // finite, so accepted; the forward says why it cannot run
  CHECK_THROWS_WITH(layer.forward(kQueries, cross(5, kKeys, 4)),
                    ContainsSubstring("the attention scores Q·Kᵀ could reach 6.4e+61") &&
                        ContainsSubstring("with |Q| up to 4e+30 and |K| up to 4e+30"));
  // W_V of 1e35 and |x| = 1e4: V itself would be 1e39.
  weights = original;
  for (std::size_t i = 0; i < 4; ++i) weights.in_proj_weight[(8 + i) * 4 + i] = 1e35f;
  layer.set_weights(weights);
  const std::vector<float> ten_thousands(4, 1e4f);
  CHECK_THROWS_WITH(layer.forward(ten_thousands, cross(1, ten_thousands, 1)),
                    ContainsSubstring("the projections Q, K and V could reach 4e+39, more than "
                                      "the limit of 1e+37") &&
                        ContainsSubstring("|in_proj_weight| up to 1e+35"));
  // Only W_Q of 1e30: the scores stay far below the limit, and the forward runs.
  weights = original;
  weights.in_proj_weight[0] = 1e30f;
  layer.set_weights(weights);
  require_probability_rows(layer.forward(kQueries, cross(5, kKeys, 4)), 4);
  layer.set_weights(original);
  // Large but safe: |x| = 1e8 gives scores up to 2e21, finite; the rows are one-hot.
  const std::vector<float> big = {1e8f, 1e8f, 1e8f, 1e8f};
  const auto& r = layer.forward(big, cross(1, kKeys, 4));
  require_probability_rows(r, 4);
  CHECK(r.attention[0] == 1.0f);
}
