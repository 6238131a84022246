// The tutorials' NumPy examples (shared/seeds 001 and 004) replayed by the core, number for
// number: weights from the NumPy-compatible generator, then outputs and attention.
#include <catch2/catch_test_macros.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "approx.hpp"
#include "attention/layer/layer.hpp"
#include "attention/rng.hpp"
#include "test_support.hpp"

namespace {

// k draws of randn * scale, as the tutorials' float64 code makes them.
std::vector<double> draw(attn::NumpyRandomState& rng, std::size_t count, double scale = 1.0) {
  std::vector<double> values(count);
  rng.fill_randn(values);
  for (auto& v : values) v *= scale;
  return values;
}

std::vector<float> to_float(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}

// in_proj_weight rows for one projection from per-head [d_model, d_k] matrices, exactly as
// seed 004 builds PyTorch's: concatenate heads along columns, then transpose.
void append_transposed_heads(std::vector<float>& in_proj, const std::vector<double>& per_head,
                             std::size_t heads, std::size_t d_model, std::size_t d_k) {
  for (std::size_t h = 0; h < heads; ++h) {
    for (std::size_t c = 0; c < d_k; ++c) {
      for (std::size_t r = 0; r < d_model; ++r) {
        in_proj.push_back(float(per_head[(h * d_model + r) * d_k + c]));
      }
    }
  }
}

attn::AttentionLayer tutorial_layer(std::size_t d_model, std::size_t heads, std::size_t d_k,
                                    bool out_proj) {
  attn::LayerConfig config;
  config.d_model = d_model;
  config.heads = heads;
  config.head_dim = d_k;
  config.bias = false;
  config.out_proj = out_proj;
  return attn::AttentionLayer(config);
}

// Runs `layer` on the n tokens of X and requires seed 004's numbers: "output", and the attention
// weights stored as `weights_name`.
const attn::ForwardResult& require_seed004_run(attn::AttentionLayer& layer,
                                               const std::vector<double>& X, std::size_t n,
                                               const attn::safetensors::File& data,
                                               const std::string& weights_name) {
  attn::ForwardOptions options;
  options.n = n;
  const auto& r = layer.forward(to_float(X), options);
  require_close(values(r.output), data.f64("output"), 1e-6, 1e-5, "output");
  require_close(r.attention, data.f64(weights_name), 1e-7, 1e-5, weights_name);
  return r;
}

// The numbers in a NumPy-printed array, e.g. "[[0.245 0.254]\n [0.3 0.2]]".
std::vector<double> printed_numbers(const std::string& text) {
  std::vector<double> numbers;
  const char* p = text.c_str();
  while (*p) {
    if (*p == '-' || (*p >= '0' && *p <= '9') || *p == '.') {
      char* end = nullptr;
      numbers.push_back(std::strtod(p, &end));
      p = end;
    } else {
      ++p;
    }
  }
  return numbers;
}

}  // namespace

TEST_CASE("seed 001: causal single-head example with np.random.seed(0)", "[seeds]") {
  const auto data = load_test_data("numpy/seed001_causal.safetensors");
  attn::NumpyRandomState rng(0);
  const std::size_t n = 5, d_model = 16, d_k = 8;
  const auto X = draw(rng, n * d_model);
  const auto Wq = draw(rng, d_model * d_k), Wk = draw(rng, d_model * d_k),
             Wv = draw(rng, d_model * d_k);
  REQUIRE(X == data.f64("X"));  // bit for bit
  REQUIRE(Wq == data.f64("Wq"));
  REQUIRE(Wk == data.f64("Wk"));
  REQUIRE(Wv == data.f64("Wv"));

  auto layer = tutorial_layer(d_model, 1, d_k, false);
  attn::LayerWeights weights;
  for (const auto* w : {&Wq, &Wk, &Wv})
    append_transposed_heads(weights.in_proj_weight, *w, 1, d_model, d_k);
  layer.set_weights(weights);
  attn::ForwardOptions options;
  options.n = n;
  options.mask.kind = attn::MaskKind::Causal;
  options.want_trace = true;
  const auto& r = layer.forward(to_float(X), options);
  require_close(values(r.output), data.f64("Y"), 1e-5, 1e-5, "Y");
  require_close(r.attention, data.f64("A"), 1e-6, 1e-5, "A");
  for (const auto& step : r.trace.steps) {
    if (step.id() == "scaled") require_close(step.data, data.f64("scores"), 1e-5, 1e-5, "scores");
    if (step.id() == "q") require_close(step.data, data.f64("Q"), 1e-5, 1e-5, "Q");
  }
}

TEST_CASE("seed 004: single-head example with np.random.seed(42)", "[seeds]") {
  const auto data = load_test_data("numpy/seed004_single_head.safetensors");
  attn::NumpyRandomState rng(42);
  const auto X = draw(rng, 4 * 8);
  const auto W_Q = draw(rng, 64, 0.1), W_K = draw(rng, 64, 0.1), W_V = draw(rng, 64, 0.1);
  REQUIRE(X == data.f64("X"));
  REQUIRE(W_Q == data.f64("W_Q"));
  REQUIRE(W_V == data.f64("W_V"));

  auto layer = tutorial_layer(8, 1, 8, false);
  attn::LayerWeights weights;
  for (const auto* w : {&W_Q, &W_K, &W_V})
    append_transposed_heads(weights.in_proj_weight, *w, 1, 8, 8);
  layer.set_weights(weights);
  const auto& r = require_seed004_run(layer, X, 4, data, "weights");
  // The numbers the tutorial prints (np.round(weights, 3)) are ours rounded the same way.
  const auto printed = printed_numbers(data.metadata().at("printed_weights"));
  REQUIRE(printed.size() == 16);
  for (std::size_t i = 0; i < 16; ++i) {
    REQUIRE(std::abs(std::round(double(r.attention[i]) * 1000.0) / 1000.0 - printed[i]) < 1e-9);
  }
}

TEST_CASE("seed 004: multi-head example, 4 heads, MultiHeadAttention(seed=42)", "[seeds]") {
  const auto data = load_test_data("numpy/seed004_multi_head.safetensors");
  attn::NumpyRandomState x_rng(42);
  const auto X = draw(x_rng, 6 * 16);
  attn::NumpyRandomState rng(42);  // the class's own RandomState(seed)
  const std::size_t heads = 4, d_model = 16, d_k = 4;
  const auto W_Q = draw(rng, heads * d_model * d_k, 0.1),
             W_K = draw(rng, heads * d_model * d_k, 0.1),
             W_V = draw(rng, heads * d_model * d_k, 0.1), W_O = draw(rng, d_model * d_model, 0.1);
  REQUIRE(X == data.f64("X"));
  REQUIRE(W_K == data.f64("W_K"));
  REQUIRE(W_O == data.f64("W_O"));

  auto layer = tutorial_layer(d_model, heads, 0, true);
  attn::LayerWeights weights;
  for (const auto* w : {&W_Q, &W_K, &W_V}) {
    append_transposed_heads(weights.in_proj_weight, *w, heads, d_model, d_k);
  }
  for (std::size_t o = 0; o < d_model; ++o) {  // out_proj.weight = W_Oᵀ
    for (std::size_t c = 0; c < d_model; ++c)
      weights.out_proj_weight.push_back(float(W_O[c * d_model + o]));
  }
  layer.set_weights(weights);
  require_seed004_run(layer, X, 6, data, "all_weights");
}

TEST_CASE("seed 004: the NumPy-vs-PyTorch comparison block", "[seeds]") {
  const auto data = load_test_data("numpy/seed004_pytorch_compare.safetensors");
  auto layer = tutorial_layer(8, 2, 0, true);
  attn::LayerWeights weights;
  weights.in_proj_weight = to_float(data.f64("in_proj_weight"));
  weights.out_proj_weight = to_float(data.f64("out_proj_weight"));
  layer.set_weights(weights);
  attn::ForwardOptions options;
  options.n = 4;
  const auto& r = layer.forward(to_float(data.f64("X")), options);
  const std::vector<float> out = values(r.output);
  require_close(out, data.f64("out_np"), 1e-6, 1e-5, "out_np");
  if (data.contains("out_pt")) require_close(out, data.f64("out_pt"), 1e-6, 1e-5, "out_pt");
}
