// Tests of AttentionLayer: against the scalar reference, attention invariants, the trace,
// weight I/O and every validation error.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "approx.hpp"
#include "attention/error.hpp"
#include "attention/layer/layer.hpp"
#include "attention/layer/step_text.hpp"
#include "layer_support.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {
attn::LayerConfig config_of(std::size_t d_model, std::size_t heads, bool bias = true,
                            attn::PositionalKind positional = attn::PositionalKind::None) {
  attn::LayerConfig config;
  config.d_model = d_model;
  config.heads = heads;
  config.bias = bias;
  config.positional = positional;
  config.seed = 7;
  return config;
}
attn::ForwardOptions self_options(std::size_t n) {
  attn::ForwardOptions options;
  options.n = n;
  return options;
}
const attn::Step& find_step(const attn::Trace& trace, const std::string& id, int head = -1) {
  for (const auto& step : trace.steps) {
    if (step.id() == id && step.head == head) return step;
  }
  FAIL("no step " << id << " head " << head);
  throw 0;
}
}  // namespace

TEST_CASE("forward equals the scalar reference across masks, biases and cross-attention",
          "[layer]") {
  struct Case {
    std::size_t d_model, heads, n, kv_n;
    bool bias, cross;
    attn::MaskKind mask;
    bool padding, scale;
  };
  const std::vector<Case> cases = {
      {16, 4, 5, 5, true, false, attn::MaskKind::None, false, true},
      {16, 4, 5, 5, false, false, attn::MaskKind::Causal, false, true},
      {24, 3, 9, 9, true, false, attn::MaskKind::SlidingWindow, true, true},
      {32, 8, 7, 7, true, false, attn::MaskKind::PrefixLM, false, false},
      {16, 2, 4, 11, true, true, attn::MaskKind::None, true, true},
      {20, 5, 13, 3, false, true, attn::MaskKind::Causal, false, true},
      {64, 4, 33, 33, true, false, attn::MaskKind::Causal, true, true},
      {1, 1, 1, 1, true, false, attn::MaskKind::None, false, true},
  };
  std::uint32_t seed = 300;
  for (const auto& c : cases) {
    attn::AttentionLayer layer(config_of(c.d_model, c.heads, c.bias));
    const auto x = random_floats(c.n * c.d_model, seed++);
    const auto kv = random_floats(c.kv_n * c.d_model, seed++);
    attn::ForwardOptions options = self_options(c.n);
    if (c.cross) {
      options.cross = true;
      options.kv = kv;
      options.kv_n = c.kv_n;
    }
    options.mask.kind = c.mask;
    options.mask.window = 3;
    options.mask.prefix = 2;
    options.scale = c.scale;
    const std::size_t keys = c.cross ? c.kv_n : c.n;
    if (c.padding) {
      options.mask.key_padding.assign(keys, 0);
      options.mask.key_padding[keys - 1] = 1;
    }
    const auto& got = layer.forward(x, options);
    const auto want = reference_forward(layer, x, options);
    const std::string label = "d=" + std::to_string(c.d_model) + " h=" + std::to_string(c.heads) +
                              " n=" + std::to_string(c.n) + " mask " + attn::mask_kind_name(c.mask);
    require_close(values(got.output), want.output, 1e-5, 1e-4, label + " output");
    require_close(got.attention, want.attention, 1e-6, 1e-4, label + " attention");
    options.want_weights = false;  // the flash path
    const auto& output_only = layer.forward(x, options);
    REQUIRE(output_only.attention.empty());
    require_close(values(output_only.output), want.output, 1e-5, 1e-4, label + " output-only");
  }
}

TEST_CASE(
    "output-only (flash) forward matches the reference with RoPE, ALiBi, cells and a "
    "fully masked query",
    "[layer]") {
  for (auto positional : {attn::PositionalKind::Rope, attn::PositionalKind::Alibi,
                          attn::PositionalKind::Sinusoidal}) {
    attn::AttentionLayer layer(config_of(32, 4, true, positional));
    const std::size_t n = 70;  // three query blocks, two key tiles
    const auto x = random_floats(n * 32, 17);
    auto options = self_options(n);
    options.mask.kind = attn::MaskKind::PrefixLM;
    options.mask.prefix = 40;
    options.mask.cells.assign(n * n, 0);
    for (std::size_t j = 0; j < n; ++j) options.mask.cells[5 * n + j] = 1;  // query 5: nothing
    options.mask.cells[9 * n + 2] = 1;
    options.want_weights = false;
    const auto& got = layer.forward(x, options);
    if (positional == attn::PositionalKind::Alibi) {  // the reference has no RoPE, no PE table
      const auto want = reference_forward(layer, x, options);
      require_close(values(got.output), want.output, 1e-5, 1e-4, "output-only vs reference");
    }
    const std::vector<float> flash = values(got.output);
    options.want_weights = true;
    const auto& with_weights = layer.forward(x, options);
    require_close(flash, values(with_weights.output), 1e-5, 1e-4, "output-only vs weights");
    for (std::size_t c = 0; c < 32; ++c) {  // the hidden query's output is out_proj.bias
      REQUIRE(std::abs(flash[5 * 32 + c] - layer.weights().out_proj_bias[c]) <= 1e-6f);
    }
  }
}

TEST_CASE("the per-head score limit applies only to paths that hold the scores", "[layer]") {
  attn::AttentionLayer layer(config_of(2, 1));
  const std::size_t n = 8200;  // n·n = 67 240 000 > kMaxScoreValues = 2^26
  const auto x = random_floats(n * 2, 3);
  auto options = self_options(n);
  options.mask.kind = attn::MaskKind::SlidingWindow;  // few key tiles per query block: quick
  options.mask.window = 2;
  REQUIRE_THROWS_WITH(layer.forward(x, options), ContainsSubstring("attention scores per head"));
  options.want_weights = false;
  const auto& r = layer.forward(x, options);
  REQUIRE(r.output.rows() == n);
  REQUIRE(r.attention.empty());
  options.want_trace = true;
  REQUIRE_THROWS_WITH(layer.forward(x, options), ContainsSubstring("attention scores per head"));
}

TEST_CASE("ALiBi and explicit cell masks match the reference", "[layer]") {
  attn::AttentionLayer layer(config_of(16, 4, true, attn::PositionalKind::Alibi));
  const std::size_t n = 6;
  const auto x = random_floats(n * 16, 5);
  auto options = self_options(n);
  options.mask.cells.assign(n * n, 0);
  options.mask.cells[1 * n + 0] = 1;
  options.mask.cells[4 * n + 2] = 1;
  const auto& got = layer.forward(x, options);
  const auto want = reference_forward(layer, x, options);
  require_close(got.attention, want.attention, 1e-6, 1e-4, "alibi attention");
  REQUIRE(got.attention[1 * n + 0] == 0.0f);
}

TEST_CASE("attention rows sum to 1 and masked weights are exactly 0", "[layer]") {
  attn::AttentionLayer layer(config_of(32, 4));
  const std::size_t n = 10;
  const auto x = random_floats(n * 32, 9);
  auto options = self_options(n);
  options.mask.kind = attn::MaskKind::Causal;
  options.mask.key_padding.assign(n, 0);
  options.mask.key_padding[0] = 1;  // query 0 sees no key at all
  const auto& r = layer.forward(x, options);
  for (std::size_t h = 0; h < 4; ++h) {
    for (std::size_t i = 0; i < n; ++i) {
      const float* row = r.attention.data() + (h * n + i) * n;
      double sum = 0.0;
      for (std::size_t j = 0; j < n; ++j) {
        REQUIRE(std::isfinite(row[j]));
        if (j > i || j == 0) REQUIRE(row[j] == 0.0f);
        sum += row[j];
      }
      if (i == 0) {
        REQUIRE(sum == 0.0);  // fully masked: zeros, not NaN
      } else {
        REQUIRE(std::abs(sum - 1.0) <= 1e-6);
      }
    }
  }
  // The fully masked query's context is zero, so its output is exactly out_proj.bias.
  const auto& bias = layer.weights().out_proj_bias;
  for (std::size_t c = 0; c < 32; ++c) REQUIRE(r.output(0, c) == bias[c]);
}

TEST_CASE("logits of ±1e4 stay finite", "[layer]") {
  attn::AttentionLayer layer(config_of(8, 1, false));
  auto weights = layer.weights();
  for (auto& w : weights.in_proj_weight) w *= 300.0f;  // scores of order 1e4 and beyond
  layer.set_weights(weights);
  const auto x = random_floats(6 * 8, 3, 3.0);
  const auto& r = layer.forward(x, self_options(6));
  float biggest = 0.0f;
  for (std::size_t i = 0; i < r.output.size(); ++i) REQUIRE(std::isfinite(r.output.data()[i]));
  for (float a : r.attention) {
    REQUIRE(std::isfinite(a));
    biggest = std::max(biggest, a);
  }
  REQUIRE(biggest > 0.99f);  // saturated: softmax picks one key per row
}

TEST_CASE("without positional encoding, self-attention is permutation-equivariant", "[layer]") {
  attn::AttentionLayer layer(config_of(16, 2));
  const std::size_t n = 7, d = 16;
  const auto x = random_floats(n * d, 17);
  const std::vector<std::size_t> perm = {3, 0, 6, 1, 5, 2, 4};
  std::vector<float> x_perm(n * d);
  for (std::size_t i = 0; i < n; ++i) std::copy_n(&x[perm[i] * d], d, &x_perm[i * d]);
  const auto first = layer.forward(x, self_options(n));  // copy: the next call reuses buffers
  const auto& second = layer.forward(x_perm, self_options(n));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 0; c < d; ++c) {
      REQUIRE(std::abs(second.output(i, c) - first.output(perm[i], c)) <= 1e-5f);
    }
    for (std::size_t h = 0; h < 2; ++h) {
      for (std::size_t j = 0; j < n; ++j) {
        REQUIRE(std::abs(second.attention[(h * n + i) * n + j] -
                         first.attention[(h * n + perm[i]) * n + perm[j]]) <= 1e-6f);
      }
    }
  }
  // With a sinusoidal encoding the same permutation changes the result.
  attn::AttentionLayer positional(config_of(16, 2, true, attn::PositionalKind::Sinusoidal));
  const auto p1 = positional.forward(x, self_options(n));
  const auto& p2 = positional.forward(x_perm, self_options(n));
  REQUIRE(std::abs(p2.output(0, 0) - p1.output(perm[0], 0)) > 1e-4f);
}

TEST_CASE("a causal output row does not change when later tokens change", "[layer]") {
  for (auto positional : {attn::PositionalKind::None, attn::PositionalKind::Rope,
                          attn::PositionalKind::Alibi, attn::PositionalKind::Sinusoidal}) {
    attn::AttentionLayer layer(config_of(16, 4, true, positional));
    const std::size_t n = 8, d = 16, changed_from = 5;
    auto x = random_floats(n * d, 23);
    auto options = self_options(n);
    options.mask.kind = attn::MaskKind::Causal;
    const auto before = layer.forward(x, options);
    for (std::size_t i = changed_from * d; i < n * d; ++i) x[i] = -3.0f * x[i] + 1.0f;
    const auto& after = layer.forward(x, options);
    for (std::size_t i = 0; i < changed_from; ++i) {
      for (std::size_t c = 0; c < d; ++c) REQUIRE(after.output(i, c) == before.output(i, c));
    }
    REQUIRE(after.output(changed_from, 0) != before.output(changed_from, 0));
  }
}

TEST_CASE("the output-only (flash) path gives the same output to float rounding", "[layer]") {
  attn::AttentionLayer layer(config_of(32, 4));
  const auto x = random_floats(12 * 32, 31);
  auto options = self_options(12);
  options.mask.kind = attn::MaskKind::Causal;
  const auto with = layer.forward(x, options);
  options.want_weights = false;
  const auto& without = layer.forward(x, options);
  REQUIRE(without.attention.empty());
  require_close(values(without.output), values(with.output), 1e-6, 1e-5, "flash vs weights");
}

TEST_CASE("the trace holds every step, in order, consistent with the result", "[layer]") {
  attn::AttentionLayer layer(config_of(16, 2, true, attn::PositionalKind::Sinusoidal));
  const std::size_t n = 4;
  const auto x = random_floats(n * 16, 41);
  auto options = self_options(n);
  options.mask.kind = attn::MaskKind::Causal;
  options.want_trace = true;
  const auto& r = layer.forward(x, options);
  std::vector<std::string> ids;
  for (const auto& s : r.trace.steps) {
    if (ids.empty() || ids.back() != s.id()) ids.push_back(s.id());
    REQUIRE(s.data.size() == s.shape[0] * s.shape[1]);
    REQUIRE_FALSE(attn::step_text(layer, s).title.empty());
    REQUIRE_FALSE(attn::step_text(layer, s).equation.empty());
  }
  REQUIRE(ids == std::vector<std::string>{"embedding", "positional", "input", "q", "k", "v",
                                          "scores", "scaled", "masked", "weights", "context",
                                          "concat", "output"});
  REQUIRE(find_step(r.trace, "embedding").data == x);
  for (int h = 0; h < 2; ++h) {
    const auto& scores = find_step(r.trace, "scores", h);
    const auto& scaled = find_step(r.trace, "scaled", h);
    const auto& masked = find_step(r.trace, "masked", h);
    const auto& weights = find_step(r.trace, "weights", h);
    REQUIRE(scores.shape == std::vector<std::size_t>{n, n});
    REQUIRE(std::string(attn::step_info(scores.kind).rows) == "query");
    REQUIRE(std::string(attn::step_info(scores.kind).cols) == "key");
    REQUIRE(find_step(r.trace, "q", h).shape == std::vector<std::size_t>{n, 8});
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        const std::size_t at = i * n + j;
        REQUIRE(std::abs(scaled.data[at] - scores.data[at] / std::sqrt(8.0f)) <= 1e-6f);
        if (j > i) {
          REQUIRE(masked.data[at] == -std::numeric_limits<float>::infinity());
        } else {
          REQUIRE(masked.data[at] == scaled.data[at]);
        }
        REQUIRE(weights.data[at] == r.attention[h * n * n + at]);
      }
    }
  }
  const auto& output = find_step(r.trace, "output");
  REQUIRE(output.data == values(r.output));
  const auto& input = find_step(r.trace, "input");
  const auto& pe = find_step(r.trace, "positional");
  for (std::size_t i = 0; i < input.data.size(); ++i) {
    REQUIRE(input.data[i] == x[i] + pe.data[i]);
  }
}

TEST_CASE("tracing one head records its steps exactly as a full trace does, and no other head's",
          "[layer]") {
  for (const auto positional : {attn::PositionalKind::Sinusoidal, attn::PositionalKind::Rope,
                                attn::PositionalKind::Alibi}) {
    attn::AttentionLayer layer(config_of(16, 4, true, positional));
    const std::size_t n = 5;
    const auto x = random_floats(n * 16, 43);
    auto options = self_options(n);
    options.mask.kind = attn::MaskKind::Causal;
    options.want_trace = true;
    const auto full = layer.forward(x, options).trace;  // a copy: the next forward reuses it
    options.trace_head = 2;
    const auto& one = layer.forward(x, options);
    std::size_t per_head_steps = 0;
    for (const auto& step : one.trace.steps) {
      REQUIRE((step.head == -1 || step.head == 2));
      const auto& same = find_step(full, step.id(), step.head);
      // Head 2's steps and those before the heads are computed alike in both traces; the
      // concatenated heads and the output also hold the other heads, fused here and step by
      // step in the full trace.
      if (step.kind == attn::StepKind::Concat || step.kind == attn::StepKind::Output) {
        require_same_across_paths(step.data, same.data, step.id());
      } else {
        REQUIRE(step.data == same.data);
      }
      REQUIRE(attn::step_text(layer, step).equation == attn::step_text(layer, same).equation);
      if (step.head == 2) ++per_head_steps;
    }
    std::size_t full_head_steps = 0;
    for (const auto& step : full.steps) full_head_steps += step.head == 2 ? 1 : 0;
    REQUIRE(per_head_steps == full_head_steps);
    REQUIRE(one.attention.size() == 4 * n * n);  // the weights of every head are still returned
  }
}

TEST_CASE("traceHead is checked, and one head's trace may hold heads times more cells", "[layer]") {
  attn::AttentionLayer layer(config_of(8, 4));
  const std::size_t n = 1100;  // 4 · 1100² > 2²² ≥ 1100²
  const auto x = random_floats(n * 8, 44);
  auto options = self_options(n);
  options.want_trace = true;
  REQUIRE_THROWS_WITH(layer.forward(x, options),
                      ContainsSubstring("a trace of heads * n * kvN = 4840000") &&
                          ContainsSubstring("trace one head (traceHead)"));
  options.trace_head = 3;
  REQUIRE(layer.forward(x, options).trace.steps.size() > 0);
  options.trace_head = 4;
  REQUIRE_THROWS_WITH(
      layer.forward(x, options),
      ContainsSubstring("traceHead must be -1 (every head) or a head from 0 to 3, got 4"));
  options.trace_head = -2;
  REQUIRE_THROWS_WITH(layer.forward(x, options), ContainsSubstring("got -2"));
}

TEST_CASE("RoPE, ALiBi and cross-attention add their own steps", "[layer]") {
  attn::AttentionLayer rope(config_of(8, 2, false, attn::PositionalKind::Rope));
  auto options = self_options(3);
  options.want_trace = true;
  const auto x = random_floats(3 * 8, 1);
  const auto& r = rope.forward(x, options);
  REQUIRE(find_step(r.trace, "q_rotated", 1).shape == std::vector<std::size_t>{3, 4});
  attn::AttentionLayer alibi(config_of(8, 2, false, attn::PositionalKind::Alibi));
  const auto kv = random_floats(5 * 8, 2);
  options.cross = true;
  options.kv = kv;
  options.kv_n = 5;
  const auto& c = alibi.forward(x, options);
  REQUIRE(find_step(c.trace, "alibi", 0).shape == std::vector<std::size_t>{3, 5});
  REQUIRE(find_step(c.trace, "source").shape == std::vector<std::size_t>{5, 8});
  REQUIRE(std::string(attn::step_info(find_step(c.trace, "k", 1).kind).rows) == "key");
}

TEST_CASE("seeded initialisation is deterministic and seed-dependent", "[layer]") {
  attn::AttentionLayer a(config_of(16, 4)), b(config_of(16, 4));
  auto other_config = config_of(16, 4);
  other_config.seed = 8;
  attn::AttentionLayer c(other_config);
  REQUIRE(a.weights().in_proj_weight == b.weights().in_proj_weight);
  REQUIRE(a.weights().in_proj_weight != c.weights().in_proj_weight);
  const float bound = std::sqrt(6.0f / (16 + 48));
  for (float w : a.weights().in_proj_weight) REQUIRE(std::abs(w) <= bound);
}

TEST_CASE("safetensors save and load round-trip; wrong files are refused", "[layer]") {
  attn::AttentionLayer source(config_of(8, 2));
  const auto bytes = source.save_safetensors();
  auto target_config = config_of(8, 2);
  target_config.seed = 99;
  attn::AttentionLayer target(target_config);
  target.load_safetensors(bytes);
  REQUIRE(target.weights().in_proj_weight == source.weights().in_proj_weight);
  REQUIRE(target.weights().out_proj_bias == source.weights().out_proj_bias);

  attn::AttentionLayer no_bias(config_of(8, 2, false));
  REQUIRE_THROWS_WITH(no_bias.load_safetensors(bytes),
                      ContainsSubstring("unexpected tensor 'in_proj_bias'"));
  attn::AttentionLayer wider(config_of(16, 2));
  REQUIRE_THROWS_WITH(wider.load_safetensors(bytes),
                      ContainsSubstring("in_proj_weight' has shape [24, 8], expected [48, 16]"));
  const auto bias_free = no_bias.save_safetensors();
  REQUIRE_THROWS_WITH(target.load_safetensors(bias_free),
                      ContainsSubstring("no tensor 'in_proj_bias'"));
  // The failed loads left the weights as they were.
  REQUIRE(target.weights().in_proj_weight == source.weights().in_proj_weight);
}

TEST_CASE("bad configs, inputs and weights throw messages naming the problem", "[layer]") {
  REQUIRE_THROWS_WITH(attn::AttentionLayer(config_of(64, 5)),
                      ContainsSubstring("heads must divide dModel") &&
                          ContainsSubstring("64 is not divisible by 5") &&
                          ContainsSubstring("1, 2, 4, 8, 16, 32, 64"));
  REQUIRE_THROWS_WITH(attn::AttentionLayer(config_of(0, 1)), ContainsSubstring("dModel"));
  REQUIRE_THROWS_WITH(attn::AttentionLayer(config_of(12, 4, true, attn::PositionalKind::Rope)),
                      ContainsSubstring("d_k must be even"));

  attn::AttentionLayer layer(config_of(16, 4));
  const auto x = random_floats(3 * 16, 1);
  REQUIRE_THROWS_WITH(layer.forward(std::span<const float>(x.data(), 47), self_options(3)),
                      ContainsSubstring("x has 47 values, expected n * dModel = 3 * 16 = 48"));
  REQUIRE_THROWS_WITH(layer.forward(x, self_options(0)), ContainsSubstring("n must be at least 1"));
  auto options = self_options(3);
  const auto kv = random_floats(10, 2);
  options.cross = true;
  options.kv = kv;
  options.kv_n = 2;
  REQUIRE_THROWS_WITH(layer.forward(x, options), ContainsSubstring("kv has 10 values"));
  auto nan_x = x;
  nan_x[5] = std::numeric_limits<float>::quiet_NaN();
  REQUIRE_THROWS_WITH(layer.forward(nan_x, self_options(3)), ContainsSubstring("x[5] is NaN"));
  auto big = self_options(70000);
  REQUIRE_THROWS_WITH(layer.forward(x, big), ContainsSubstring("exceeds the limit"));

  auto weights = layer.weights();
  weights.in_proj_weight.pop_back();
  REQUIRE_THROWS_WITH(layer.set_weights(weights),
                      ContainsSubstring("in_proj_weight has 767 values, expected [48, 16] = 768"));
  weights = layer.weights();
  weights.out_proj_bias[2] = std::numeric_limits<float>::infinity();
  REQUIRE_THROWS_WITH(layer.set_weights(weights),
                      ContainsSubstring("out_proj.bias[2] is infinite"));
  // After all that, the layer still answers correctly.
  const auto& r = layer.forward(x, self_options(3));
  const auto want = reference_forward(layer, x, self_options(3));
  require_close(values(r.output), want.output, 1e-5, 1e-4, "after errors");
}
