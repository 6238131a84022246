// Tests of explain_cell: for every cell of every traced step of small layers (self- and
// cross-attention, bias, masks, RoPE, ALiBi, sinusoidal and learned encodings, scaling off, no
// W_O), the terms are the independently read inputs, the products sum to the cell and the
// quantities compose to it; and every validation error names the problem.

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/layer/explain.hpp"
#include "attention/layer/layer.hpp"
#include "explain_support.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace explain_test;

TEST_CASE("explain: every cell of a causal self-attention layer with bias", "[explain]") {
  check_all_cells(Setup{});
}

TEST_CASE("explain: RoPE without bias", "[explain]") {
  Setup s;
  s.layer.bias = false;
  s.layer.positional = attn::PositionalKind::Rope;
  s.n = 5;
  check_all_cells(s);
}

TEST_CASE("explain: ALiBi with key padding and no mask kind", "[explain]") {
  Setup s;
  s.layer.positional = attn::PositionalKind::Alibi;
  s.mask = attn::MaskKind::None;
  s.n = 5;
  s.key_padding = {0, 0, 1, 0, 0};
  check_all_cells(s);
}

TEST_CASE("explain: cross-attention with a sinusoidal encoding and a longer source", "[explain]") {
  Setup s;
  s.layer.positional = attn::PositionalKind::Sinusoidal;
  s.mask = attn::MaskKind::None;
  s.n = 3;
  s.kv_n = 6;
  s.key_padding = {0, 1, 0, 0, 0, 0};
  check_all_cells(s);
}

TEST_CASE("explain: cross-attention with a learned encoding, causal", "[explain]") {
  Setup s;
  s.layer.positional = attn::PositionalKind::Learned;
  s.n = 4;
  s.kv_n = 7;
  s.layer.heads = 4;
  check_all_cells(s);
}

TEST_CASE("explain: scaling off, no output projection, one head", "[explain]") {
  Setup s;
  s.scale = false;
  s.layer.out_proj = false;
  s.layer.heads = 1;
  check_all_cells(s);
  s.layer.heads = 2;
  s.layer.bias = false;
  check_all_cells(s);
}

TEST_CASE("explain: a head width other than d_model / heads, sliding-window mask", "[explain]") {
  Setup s;
  s.layer.head_dim = 3;  // inner = 6 != d_model = 8
  s.mask = attn::MaskKind::SlidingWindow;
  s.window = 2;
  s.n = 5;
  check_all_cells(s);
  s.layer.positional = attn::PositionalKind::Learned;
  s.kv_n = 9;
  s.mask = attn::MaskKind::PrefixLM;
  check_all_cells(s);
}

TEST_CASE("explain: grouped-query attention with rotate_half RoPE (Llama)", "[explain][gqa]") {
  Setup s;
  s.layer.d_model = 8;
  s.layer.heads = 4;
  s.layer.kv_heads = 2;
  s.layer.head_dim = 4;
  s.layer.bias = false;
  s.layer.positional = attn::PositionalKind::Rope;
  s.layer.rope.pairing = attn::RopePairing::RotateHalf;
  s.layer.rope.base = 500000.0;
  s.n = 5;
  check_all_cells(s);
  // Llama 3's rescaled frequencies, with attention_bias.
  s.layer.bias = true;
  s.layer.rope.frequencies = {1.0, 0.0625};
  check_all_cells(s);
}

TEST_CASE("explain: multi-query attention, Qwen2's biases, sliding window, cross-attention",
          "[explain][gqa]") {
  Setup s;
  s.layer.heads = 4;
  s.layer.kv_heads = 1;
  s.layer.head_dim = 2;
  s.layer.out_bias = false;  // q/k/v biases, no out_proj.bias
  s.layer.positional = attn::PositionalKind::Rope;
  s.layer.rope.pairing = attn::RopePairing::RotateHalf;
  s.layer.rope.base = 1e6;
  s.mask = attn::MaskKind::SlidingWindow;
  s.window = 3;
  s.n = 8;
  check_all_cells(s);
  // The rest of the combinations: an out_proj.bias without q/k/v biases, interleaved pairs,
  // two K/V heads for four query heads reading a longer source.
  s.layer.kv_heads = 2;
  s.layer.bias = false;
  s.layer.out_bias = true;
  s.layer.rope = attn::RopeSpec{};
  s.mask = attn::MaskKind::Causal;
  s.n = 3;
  s.kv_n = 6;
  check_all_cells(s);
}

TEST_CASE("explain: a query with every key masked has zero weights and says so", "[explain]") {
  Setup s;
  s.key_padding = {1, 0, 0, 0};  // causal: query 0 sees only key 0, which is padded
  check_all_cells(s);

  attn::AttentionLayer layer(s.layer);
  const auto x = random_floats(s.n * s.layer.d_model, 3);
  attn::ForwardOptions options;
  options.n = s.n;
  options.mask.kind = attn::MaskKind::Causal;
  options.mask.key_padding = s.key_padding;
  options.want_trace = true;
  layer.forward(x, options);
  const auto e = attn::explain_cell(layer, "weights", 1, 0, 0);
  REQUIRE(e.value == 0.0f);
  REQUIRE(e.terms.empty());
  REQUIRE(quantity(e, "masked score") == -kInf);
  REQUIRE(quantity(e, "visible keys") == 0.0);
  // A masked key in a row that sees others: weight 0, its exp term 0.
  const auto m = attn::explain_cell(layer, "weights", 0, 2, 3);
  REQUIRE(m.value == 0.0f);
  REQUIRE(quantity(m, "exp") == 0.0);
  REQUIRE(m.terms[3].left == 0.0f);
  const auto masked = attn::explain_cell(layer, "masked", 0, 2, 3);
  REQUIRE(quantity(masked, "mask (masked)") == -kInf);
}

TEST_CASE("explain: the documented shape of a scores and a weights explanation", "[explain]") {
  std::vector<float> x;
  const auto layer = traced_layer(x);
  const auto s = attn::explain_cell(layer, "scores", 1, 2, 1);
  REQUIRE(s.terms.size() == 4);
  REQUIRE(s.left_label == "q_2[t]");
  REQUIRE(s.right_label == "k_1[t]");
  REQUIRE_THAT(s.summary, ContainsSubstring("over d_k = 4 terms"));
  REQUIRE_THAT(s.summary, ContainsSubstring("head 2 of 2"));
  REQUIRE_THAT(s.equation, ContainsSubstring("S_{2,1} = \\sum_{t=0}^{3} q_{2,t}"));
  const auto w = attn::explain_cell(layer, "weights", 0, 2, 1);
  std::vector<std::string> names;
  for (const auto& q : w.quantities) names.push_back(q.name);
  REQUIRE(names ==
          std::vector<std::string>{"masked score", "row max", "shifted", "exp", "row sum"});
  REQUIRE(w.terms.size() == 4);
  REQUIRE(w.terms[3].left == 0.0f);  // causal: key 3 hidden from query 2
  REQUIRE_THAT(w.summary, ContainsSubstring("3 of 4 keys visible"));
}

TEST_CASE("explain: errors name the problem and the expected value", "[explain]") {
  attn::LayerConfig config;
  config.d_model = 8;
  config.heads = 2;
  attn::AttentionLayer fresh(config);
  require_error(fresh, "scores", 0, 0, 0, "explain needs a forward with trace: true first");

  std::vector<float> x;
  auto layer = traced_layer(x);
  require_error(layer, "foo", 0, 0, 0, "unknown step 'foo'; the last trace has: embedding, input");
  require_error(layer, "alibi", 0, 0, 0, "step 'alibi' is not in the last trace");
  require_error(layer, "q_rotated", 0, 0, 0, "positional: 'rope'");
  require_error(layer, "scores", 2, 0, 0,
                "head 2 is out of range for step 'scores': expected 0 to 1 (0-based; 2 heads)");
  require_error(layer, "scores", -5, 0, 0, "head -5 is out of range");
  require_error(layer, "scores", -1, 0, 0, "step 'scores' has one grid per head: pass head 0 to 1");
  require_error(layer, "concat", 0, 0, 0,
                "step 'concat' is shared by all heads: head must be -1 (or omitted), got 0");
  require_error(layer, "scores", 0, 4, 0,
                "row 4 is out of range for step 'scores' (shape [4, 4], a row per query): "
                "expected 0 to 3");
  require_error(layer, "q", 1, 0, 4,
                "col 4 is out of range for step 'q' (shape [4, 4], a column per dimension): "
                "expected 0 to 3");
  require_error(layer, "output", -1, 0, 8, "col 8 is out of range for step 'output'");
  require_error(layer, "embedding", -1, 99, 0, "row 99 is out of range");

  // Weights replaced after the traced forward: the trace no longer matches them.
  auto weights = layer.weights();
  for (auto& w : weights.in_proj_weight) w *= 2.0f;
  for (auto& w : weights.out_proj_weight) w *= -1.0f;
  layer.set_weights(weights);
  require_error(layer, "q", 0, 1, 1, "the layer's weights changed since the last traced forward");
  require_error(layer, "output", -1, 1, 1, "run forward with trace: true again");
  REQUIRE_NOTHROW(attn::explain_cell(layer, "scores", 0, 1, 1));  // trace-only steps still work

  // A forward without trace clears it.
  attn::ForwardOptions untraced;
  untraced.n = 4;
  layer.forward(x, untraced);
  require_error(layer, "scores", 0, 0, 0, "explain needs a forward with trace: true first");
}
