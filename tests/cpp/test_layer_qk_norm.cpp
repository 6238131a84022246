// A layer of its own with a checkpoint block's switches (q/k norms with their own weights, a
// partial rotary, the block's scale, a soft-cap): built from Model::layer_config and a copy of the
// block's weights, it traces every step bit for bit as the model's traced layer (which borrows
// the weights); its q/k norms' weights are checked by width, start as the identity and travel
// through .safetensors.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "approx.hpp"
#include "attention/error.hpp"
#include "attention/layer/layer.hpp"
#include "checkpoint_cases.hpp"
#include "test_support.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

const CheckpointCases families{"families"};

std::vector<std::int32_t> ids_of(const std::string& name) {
  std::vector<std::int32_t> ids;
  for (const double id : families.expected(name).f64("ids")) ids.push_back(std::int32_t(id));
  return ids;
}

// A copy of a layer's weights (the model's traced layer borrows them from its buffer).
attn::LayerWeights copy_of(const attn::LayerWeightsView& view) {
  const auto vec = [](std::span<const float> s) { return std::vector<float>(s.begin(), s.end()); };
  return {vec(view.in_proj_weight), vec(view.in_proj_bias), vec(view.out_proj_weight),
          vec(view.out_proj_bias),  vec(view.q_norm),       vec(view.k_norm)};
}

}  // namespace

TEST_CASE("a layer of its own with a block's switches traces as the model's layer, bit for bit",
          "[layer][families][trace]") {
  // Qwen3 and Gemma 3 (1 + w, the block's scale, local and global layers): q/k norms per head;
  // OLMo 2: over the whole projection; Gemma 2: the soft-cap; Pythia: a partial rotary.
  for (const char* name :
       {"qwen3-f32", "gemma3-f32", "gemma3-pattern-f32", "olmo2-f32", "gemma2-f32", "pythia-f32"}) {
    INFO(name);
    const auto model = families.load(name);
    const auto ids = ids_of(name);
    const std::size_t n = ids.size();
    model->trace(ids, n);
    for (std::size_t l = 0; l < model->config().layers; ++l) {
      INFO("layer " << l);
      const attn::AttentionLayer& traced = model->traced_layer(l);
      const attn::LayerConfig config = model->layer_config(l);
      CHECK(config.qk_norm == model->config().blocks[l].qk_norm);
      attn::AttentionLayer own(config);
      own.set_weights(copy_of(traced.weight_view()));
      attn::ForwardOptions options = traced.last_result().options;
      const auto input = model->attention_input(l);
      const auto& result = own.forward(input, options);
      const auto& want = traced.last_result().trace.steps;
      REQUIRE(result.trace.steps.size() == want.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        INFO("step " << want[i].id() << " head " << want[i].head);
        CHECK(result.trace.steps[i].kind == want[i].kind);
        CHECK(result.trace.steps[i].head == want[i].head);
        CHECK(result.trace.steps[i].data == want[i].data);  // bit for bit: the same code
      }
      const bool normed = config.qk_norm != attn::QkNorm::None;
      std::size_t q_normed = 0;
      for (const auto& step : result.trace.steps) q_normed += step.kind == attn::StepKind::QNormed;
      CHECK(q_normed == (normed ? config.heads : 0u));
    }
  }
}

TEST_CASE("a layer's own q/k norms: identity at first, checked by width, saved and loaded",
          "[layer]") {
  attn::LayerConfig config;
  config.d_model = 16;
  config.heads = 4;
  config.kv_heads = 2;
  config.qk_norm = attn::QkNorm::PerHead;
  config.qk_norm_weight = attn::RmsNormWeight::OnePlus;
  attn::AttentionLayer layer(config);
  CHECK(layer.weights().q_norm == std::vector<float>(4, 0.0f));  // 1 + w with w = 0
  CHECK(layer.weights().k_norm == std::vector<float>(4, 0.0f));

  attn::LayerWeights weights = layer.weights();
  weights.q_norm.assign(8, 0.5f);
  CHECK_THROWS_WITH(
      layer.set_weights(weights),
      ContainsSubstring("q_norm.weight has 8 values, expected 4") && ContainsSubstring("per head"));
  weights.q_norm.assign(4, 0.5f);
  weights.k_norm[2] = std::nanf("");
  CHECK_THROWS_WITH(layer.set_weights(weights), ContainsSubstring("k_norm.weight[2] is NaN"));
  weights.k_norm.assign({0.25f, -0.5f, 1.0f, 2.0f});
  layer.set_weights(weights);

  // A whole-projection norm is as wide as the queries (and the keys: kv_heads · head_dim).
  attn::LayerConfig whole = config;
  whole.qk_norm = attn::QkNorm::Whole;
  attn::LayerWeights whole_weights = weights;
  CHECK_THROWS_WITH(attn::AttentionLayer(whole).set_weights(whole_weights),
                    ContainsSubstring("q_norm.weight has 4 values, expected 16") &&
                        ContainsSubstring("whole projection"));
  CHECK(attn::AttentionLayer(whole).weights().k_norm.size() == 8u);

  // A layer without q/k norms refuses their weights by name.
  attn::LayerConfig plain = config;
  plain.qk_norm = attn::QkNorm::None;
  CHECK_THROWS_WITH(attn::AttentionLayer(plain).set_weights(weights),
                    ContainsSubstring("q_norm.weight was given, but the layer was created "
                                      "without q/k norms"));

  // .safetensors carries them, and the reloaded layer computes the same.
  const auto bytes = layer.save_safetensors();
  attn::AttentionLayer loaded(config);
  loaded.load_safetensors(bytes);
  CHECK(loaded.weights().q_norm == weights.q_norm);
  CHECK(loaded.weights().k_norm == weights.k_norm);
  const auto x = random_floats(5 * 16, 7);
  attn::ForwardOptions options;
  options.n = 5;
  const std::vector<float> a = layer.forward(x, options).attention;
  CHECK(loaded.forward(x, options).attention == a);
  // The norm changes the scores: a layer with other norm weights attends otherwise.
  weights.q_norm.assign(4, 3.0f);
  layer.set_weights(weights);
  CHECK(layer.forward(x, options).attention != a);
  attn::LayerConfig bad = config;
  bad.qk_norm_eps = 0.0;
  CHECK_THROWS_WITH(attn::AttentionLayer(bad), ContainsSubstring("qkNormEps"));
}
