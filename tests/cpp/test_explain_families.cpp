// Tests of explain_cell for what the checkpoint families add to the layer: a partial rotary and the
// model's own scale (GPT-NeoX, Gemma), soft-capped scores (Gemma 2), q/k norms per head and over
// the whole projection, w or 1 + w (Qwen3, Gemma 3, OLMo 2): every cell checked as in
// test_explain.cpp, and the refusals.

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

TEST_CASE("explain: a partial rotary (GPT-NeoX, Phi-4) and the model's own scale (Gemma)",
          "[explain][gqa]") {
  Setup s;
  s.layer.d_model = 16;
  s.layer.heads = 2;
  s.layer.head_dim = 8;
  s.layer.positional = attn::PositionalKind::Rope;
  s.layer.rope.pairing = attn::RopePairing::RotateHalf;
  s.layer.rope.rotary_dims = 4;  // columns 4 … 7 of each head pass through
  s.layer.scale = 0.3;
  s.n = 5;
  check_all_cells(s);
  s.layer.rope.pairing = attn::RopePairing::Interleaved;
  s.layer.rope.frequencies = {0.5, 0.25};  // one per pair of the rotated columns
  s.scale = false;                         // scaling off still wins
  check_all_cells(s);
}

TEST_CASE("explain: soft-capped scores (Gemma 2), alone and under ALiBi and a window",
          "[explain]") {
  Setup s;
  s.layer.heads = 2;
  s.layer.kv_heads = 1;
  s.layer.head_dim = 8;
  s.layer.scale = 0.4;  // large enough that the cap bends some scores
  s.layer.softcap = 1.5;
  s.n = 6;
  check_all_cells(s);
  s.layer.positional = attn::PositionalKind::Alibi;
  s.mask = attn::MaskKind::SlidingWindow;
  s.window = 3;
  check_all_cells(s);
}

TEST_CASE(
    "explain: q/k norms per head (Qwen3, Gemma 3's 1 + w) and over the whole projection "
    "(OLMo 2)",
    "[explain][gqa]") {
  Setup s;
  s.layer.d_model = 16;
  s.layer.heads = 4;
  s.layer.kv_heads = 2;
  s.layer.head_dim = 4;
  s.layer.bias = false;
  s.layer.positional = attn::PositionalKind::Rope;
  s.layer.rope.pairing = attn::RopePairing::RotateHalf;
  s.layer.qk_norm = attn::QkNorm::PerHead;
  s.n = 5;
  check_all_cells(s);
  s.layer.qk_norm_weight = attn::RmsNormWeight::OnePlus;
  s.layer.scale = 0.3;
  check_all_cells(s);
  s.layer.qk_norm = attn::QkNorm::Whole;
  s.layer.qk_norm_weight = attn::RmsNormWeight::Plain;
  s.layer.qk_norm_eps = 1e-5;
  check_all_cells(s);
  s.layer.positional = attn::PositionalKind::None;  // the scores read the normalised q and k
  s.layer.rope = attn::RopeSpec{};
  check_all_cells(s);
}

TEST_CASE(
    "explain: q/k norms' weights are checked by width; a whole-row norm needs every head "
    "traced",
    "[explain]") {
  attn::LayerConfig config;
  config.d_model = 8;
  config.heads = 2;
  config.qk_norm = attn::QkNorm::PerHead;
  // A layer of its own starts with identity norms (weights 1) of one head's width.
  CHECK(attn::AttentionLayer(config).weights().q_norm == std::vector<float>(4, 1.0f));
  config.qk_norm = attn::QkNorm::Whole;
  attn::LayerConfig plain = config;
  plain.qk_norm = attn::QkNorm::None;
  const attn::LayerWeights owned = attn::AttentionLayer(plain).weights();
  attn::LayerWeightsView view = attn::view_of(owned);
  const std::vector<float> q_norm(8, 1.0f), short_norm(4, 1.0f);
  view.q_norm = q_norm;
  view.k_norm = short_norm;  // the whole projection's k is 8 wide
  CHECK_THROWS_WITH(attn::AttentionLayer(config, view),
                    ContainsSubstring("k_norm.weight has 4 values, expected 8"));
  view.k_norm = q_norm;
  attn::AttentionLayer layer(config, view);
  const auto x = random_floats(3 * 8, 9);
  attn::ForwardOptions options;
  options.n = 3;
  options.want_trace = true;
  options.trace_head = 1;
  layer.forward(x, options);
  CHECK_THROWS_WITH(
      attn::explain_cell(layer, "q_normed", 1, 0, 0),
      ContainsSubstring("needs every head's 'q' step") && ContainsSubstring("trace every head"));
}
