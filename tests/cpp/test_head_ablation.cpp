// Head ablation: zeroing a head's context equals zeroing its columns of out_proj (the reference),
// a head that contributes nothing has no effect, and the model's weights stay unchanged.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/model/model.hpp"
#include "attention/train/head_ablation.hpp"
#include "attention/train/head_scores.hpp"
#include "attention/train/probe.hpp"
#include "attention/train/trainer.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

attn::SmallModelOptions ablation_model() {
  return {
      .vocab = 11, .context = 12, .d_model = 16, .heads = 4, .layers = 2, .mlp = true, .seed = 9};
}

// Zeroes head `head`'s d_k input columns of layer `layer`'s out_proj.weight [d, d].
void zero_out_proj_columns(attn::Model& model, std::size_t layer, std::size_t head) {
  const std::size_t d = model.config().d_model, d_k = d / model.config().heads;
  auto w = model.parameter("layers." + std::to_string(layer) + ".attn.out_proj.weight");
  for (std::size_t row = 0; row < d; ++row) {
    for (std::size_t j = 0; j < d_k; ++j) w[row * d + head * d_k + j] = 0.0f;
  }
}

bool close(double a, double b) {
  return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(b));
}

}  // namespace

TEST_CASE("ablating a head equals zeroing its out_proj columns (the reference)", "[ablation]") {
  attn::Model model(ablation_model());
  const attn::Batch probe = attn::induction_probe(4, 6, 11, 3);
  const std::vector<float> before(model.parameters().begin(), model.parameters().end());
  const attn::HeadAblationResult result = attn::head_ablation(model, probe);
  CHECK(std::vector<float>(model.parameters().begin(), model.parameters().end()) == before);
  CHECK(close(result.loss, attn::evaluate(model, probe).loss));
  REQUIRE(result.heads.size() == 2);
  bool some_head_matters = false;
  for (std::size_t layer = 0; layer < 2; ++layer) {
    REQUIRE(result.heads[layer].size() == 4);
    for (std::size_t head = 0; head < 4; ++head) {
      attn::Model reference(ablation_model());
      zero_out_proj_columns(reference, layer, head);
      const double expected = attn::evaluate(reference, probe).loss;
      INFO("layer " << layer << " head " << head);
      CHECK(close(result.heads[layer][head].loss, expected));
      some_head_matters = some_head_matters || !close(result.heads[layer][head].loss, result.loss);
    }
  }
  CHECK(some_head_matters);
}

TEST_CASE("a head whose out_proj columns are zero changes nothing when ablated", "[ablation]") {
  attn::Model model(ablation_model());
  zero_out_proj_columns(model, 1, 2);
  const attn::Batch probe = attn::model_probe(model.config());
  const attn::HeadAblationResult result = attn::head_ablation(model, probe);
  CHECK(close(result.heads[1][2].loss, result.loss));
  CHECK(result.heads[1][2].delta == result.heads[1][2].loss - result.loss);
  CHECK(std::abs(result.heads[1][2].delta) <= 1e-6);
  CHECK_FALSE(close(result.heads[0][2].loss, result.loss));
}

TEST_CASE("ablation leaves the attention weights and the training path alone", "[ablation]") {
  attn::Model model(ablation_model());
  const std::vector<std::int32_t> ids = {1, 2, 3, 4, 5, 1, 2, 3};
  const std::vector<std::int32_t> targets = {2, 3, 4, 5, 1, 2, 3, 4};
  const auto plain = model.forward(ids, 1, 8);
  const std::vector<float> logits(plain.logits.begin(), plain.logits.end());
  const std::vector<float> attention(plain.attention[1].begin(), plain.attention[1].end());
  const auto ablated = model.forward(ids, 1, 8, attn::HeadAblation{0, 1});
  CHECK(std::vector<float>(ablated.logits.begin(), ablated.logits.end()) != logits);
  const auto last_layer = model.forward(ids, 1, 8, attn::HeadAblation{1, 3});
  CHECK(std::vector<float>(last_layer.logits.begin(), last_layer.logits.end()) != logits);
  const float loss = model.loss_and_gradients(ids, targets, 1, 8);
  const auto again = model.forward(ids, 1, 8);
  CHECK(std::vector<float>(again.logits.begin(), again.logits.end()) == logits);
  CHECK(std::vector<float>(again.attention[1].begin(), again.attention[1].end()) == attention);
  CHECK(std::isfinite(loss));
}

TEST_CASE("ablating a head the model does not have is an error", "[ablation]") {
  attn::Model model(ablation_model());
  const std::vector<std::int32_t> ids = {1, 2, 3};
  CHECK_THROWS_WITH(model.forward(ids, 1, 3, attn::HeadAblation{2, 0}),
                    ContainsSubstring("cannot ablate layer 2 head 0") &&
                        ContainsSubstring("layers 0 to 1 and heads 0 to 3"));
  CHECK_THROWS_AS(model.forward(ids, 1, 3, attn::HeadAblation{0, 4}), attn::Error);
}

TEST_CASE("probes: the default one fits the model, the caller's gets next-token targets",
          "[ablation]") {
  attn::ModelConfig config = attn::small_model_config(ablation_model());
  const attn::Batch probe = attn::model_probe(config);
  CHECK(probe.n == 12);
  CHECK(probe.batch == attn::kProbeBatch);
  config.context = 200;
  CHECK(attn::model_probe(config).n == 2 * attn::kProbeMaxHalfLength);
  config.context = 3;
  CHECK_THROWS_WITH(attn::model_probe(config), ContainsSubstring("at least 4 tokens"));
  const attn::Batch own = attn::probe_batch({1, 2, 3, 4, 5, 6}, {}, 2, 3);
  CHECK(own.targets == std::vector<std::int32_t>{2, 3, -1, 5, 6, -1});
  CHECK_THROWS_WITH(attn::probe_batch({1, 2, 3}, {}, 2, 3),
                    ContainsSubstring("3 tokens, expected batch * n = 6"));
  CHECK_THROWS_WITH(attn::probe_batch({1, 2, 3}, {1}, 1, 3),
                    ContainsSubstring("targets have 1 values"));
}
