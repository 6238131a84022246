// Head ablation (Model::ablate): an ablated forward equals a float64 hand computation and
// PyTorch's (tests/data/ablation, from scripts/data/make-ablation-golden.py); ablating a head
// equals zeroing its out_proj columns; ablation holds in generation, traces and gradients; every
// refused head is named.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "attention/model/generate.hpp"
#include "attention/model/model.hpp"
#include "attention/ops/causal_attention.hpp"
#include "attention/ops/layernorm.hpp"
#include "attention/ops/linear.hpp"
#include "checkpoint_cases.hpp"
#include "generate_support.hpp"
#include "test_support.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

// ---- the float64 hand computation ---------------------------------------------------------------

// The model of `config` (layer_norm, learned positions, GELU MLP) written out in double from its
// parameters with the ablated heads' context scaled before out_proj: logits [n, vocab].
std::vector<double> ablated_reference(attn::Model& model, const std::vector<std::int32_t>& ids,
                                      const std::vector<attn::HeadAblation>& ablation) {
  const attn::ModelConfig& c = model.config();
  const std::size_t n = ids.size(), d = c.d_model, V = c.vocab, W = 4 * d, dk = d / c.heads;
  const auto param = [&](const std::string& name) {
    const auto values = model.parameter_values(name);
    return std::vector<double>(values.begin(), values.end());
  };
  const auto embed = param("embed.weight"), pos = param("pos.weight");
  std::vector<double> x(n * d);
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t i = 0; i < d; ++i)
      x[t * d + i] = embed[std::size_t(ids[t]) * d + i] + pos[t * d + i];
  }
  std::vector<double> h(n * d), mean(n), rstd(n), qkv(n * 3 * d), att(c.heads * n * n), ctx(n * d),
      out(n * d), fc(n * W), act(n * W);
  const attn::AttentionShape shape = attn::attention_shape(c);
  for (std::size_t l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    attn::reference::layernorm_forward(x.data(), param(p + "ln1.weight").data(),
                                       param(p + "ln1.bias").data(), h.data(), mean.data(),
                                       rstd.data(), n, d);
    attn::reference::linear_forward(h.data(), param(p + "attn.in_proj_weight").data(),
                                    param(p + "attn.in_proj_bias").data(), qkv.data(), n, d, 3 * d);
    attn::reference::causal_attention_forward(qkv.data(), att.data(), ctx.data(), 1, n, shape);
    for (const attn::HeadAblation& a : ablation) {
      if (a.layer != l) continue;
      for (std::size_t t = 0; t < n; ++t) {
        for (std::size_t i = 0; i < dk; ++i) ctx[t * d + a.head * dk + i] *= double(a.scale);
      }
    }
    attn::reference::linear_forward(ctx.data(), param(p + "attn.out_proj.weight").data(),
                                    param(p + "attn.out_proj.bias").data(), out.data(), n, d, d);
    for (std::size_t i = 0; i < n * d; ++i) x[i] += out[i];
    attn::reference::layernorm_forward(x.data(), param(p + "ln2.weight").data(),
                                       param(p + "ln2.bias").data(), h.data(), mean.data(),
                                       rstd.data(), n, d);
    attn::reference::linear_forward(h.data(), param(p + "mlp.fc.weight").data(),
                                    param(p + "mlp.fc.bias").data(), fc.data(), n, d, W);
    for (std::size_t i = 0; i < n * W; ++i) {
      act[i] = 0.5 * fc[i] * (1.0 + std::erf(fc[i] / std::sqrt(2.0)));
    }
    attn::reference::linear_forward(act.data(), param(p + "mlp.proj.weight").data(),
                                    param(p + "mlp.proj.bias").data(), out.data(), n, W, d);
    for (std::size_t i = 0; i < n * d; ++i) x[i] += out[i];
  }
  attn::reference::layernorm_forward(x.data(), param("ln_f.weight").data(),
                                     param("ln_f.bias").data(), h.data(), mean.data(), rstd.data(),
                                     n, d);
  std::vector<double> logits(n * V);
  attn::reference::linear_forward(h.data(), param("unembed.weight").data(),
                                  static_cast<const double*>(nullptr), logits.data(), n, d, V);
  return logits;
}

double relative_l2(std::span<const float> ours, const std::vector<double>& reference) {
  double diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    diff += (double(ours[i]) - reference[i]) * (double(ours[i]) - reference[i]);
    norm += reference[i] * reference[i];
  }
  return std::sqrt(diff / norm);
}

}  // namespace

TEST_CASE("an ablated forward equals a float64 hand computation; ablate({}) restores bit for bit",
          "[generate][ablation]") {
  attn::Model model(ablation_config());
  redraw(model, 0.2, 21);
  const std::vector<std::int32_t> ids = some_ids(14, 40, 21);
  const auto plain = model.forward(ids, 1, ids.size());
  const std::vector<float> plain_logits(plain.logits.begin(), plain.logits.end());
  const std::vector<float> plain_attention(plain.attention[1].begin(), plain.attention[1].end());
  CHECK(relative_l2(plain_logits, ablated_reference(model, ids, {})) < 1e-5);

  for (const std::vector<attn::HeadAblation>& heads :
       {std::vector<attn::HeadAblation>{{0, 1}},
        std::vector<attn::HeadAblation>{{1, 3}, {0, 0, 0.5f}, {0, 2}},
        std::vector<attn::HeadAblation>{{1, 0, 0.25f}}}) {
    model.ablate(heads);
    CHECK(model.ablated() == heads);
    const auto ablated = model.forward(ids, 1, ids.size());
    const auto reference = ablated_reference(model, ids, heads);
    const double error = relative_l2(ablated.logits, reference);
    const double moved = relative_l2(plain_logits, reference);
    INFO("relative L2 error " << error << "; the ablation moved the logits by " << moved);
    CHECK(error < 1e-5);
    CHECK(moved > 1e-3);  // the comparison can tell an ablated model from the plain one
    model.ablate({});
    CHECK(model.ablated().empty());
    const auto restored = model.forward(ids, 1, ids.size());
    CHECK(std::vector<float>(restored.logits.begin(), restored.logits.end()) == plain_logits);
    CHECK(std::vector<float>(restored.attention[1].begin(), restored.attention[1].end()) ==
          plain_attention);
  }
}

TEST_CASE("ablating a head equals zeroing its out_proj columns; forward's one-off head adds to it",
          "[generate][ablation]") {
  attn::Model model(ablation_config());
  redraw(model, 0.2, 22);
  attn::Model reference(ablation_config());
  redraw(reference, 0.2, 22);
  const std::size_t d = 32, dk = 8;
  for (const auto [layer, head] : {std::pair<std::size_t, std::size_t>{0, 2}, {1, 1}}) {
    auto w = reference.parameter("layers." + std::to_string(layer) + ".attn.out_proj.weight");
    for (std::size_t r = 0; r < d; ++r) {
      for (std::size_t j = 0; j < dk; ++j) w[r * d + head * dk + j] = 0.0f;
    }
  }
  const std::vector<std::int32_t> ids = some_ids(16, 40, 22);
  model.ablate({{0, 2}, {1, 1}});
  const auto ours = model.forward(ids, 1, 16);
  const std::vector<float> logits(ours.logits.begin(), ours.logits.end());
  const auto zeroed = reference.forward(ids, 1, 16);
  CHECK(logits == std::vector<float>(zeroed.logits.begin(), zeroed.logits.end()));
  // head_ablation's one-off head on top of the standing ones.
  model.ablate({{0, 2}});
  const auto both = model.forward(ids, 1, 16, attn::HeadAblation{1, 1});
  CHECK(std::vector<float>(both.logits.begin(), both.logits.end()) == logits);
}

TEST_CASE("ablation holds in generation, traces and gradients", "[generate][ablation]") {
  attn::SmallModelOptions config = ablation_config();
  config.positional = attn::PositionalKind::Rope;
  attn::Model model(config);
  redraw(model, 0.25, 23);
  const std::vector<std::int32_t> prompt = some_ids(8, 40, 23);
  attn::GenerateOptions options;
  options.max_tokens = 16;
  const attn::Generation plain = attn::generate(model, prompt, options);
  model.ablate({{0, 1}, {1, 2, 0.3f}});
  require_greedy_equals_full_forwards(model, prompt, 16);  // cached steps ablate as forward does
  const attn::Generation ablated = attn::generate(model, prompt, options);
  CHECK(ablated.ids != plain.ids);

  // A generation under way keeps the heads it started with.
  model.ablate({});
  attn::Generator generator(model, prompt, options);
  model.ablate({{0, 1}, {1, 2, 0.3f}});
  std::vector<std::int32_t> ids;
  while (auto step = generator.next()) ids.push_back(step->id);
  CHECK(ids == plain.ids);

  // The trace's later layers read the ablated model.
  const auto forward = model.forward(prompt, 1, prompt.size());
  const auto input = model.attention_input(1);
  const std::vector<float> layer1(input.begin(), input.end());
  model.trace(prompt, prompt.size());
  const auto traced = model.attention_input(1);
  CHECK(std::vector<float>(traced.begin(), traced.end()) == layer1);
  (void)forward;

  // Gradients are the ablated model's: nothing reaches a zeroed head's query rows or its
  // out_proj columns.
  model.ablate({{0, 1}});
  std::vector<std::int32_t> targets(prompt.begin() + 1, prompt.end());
  targets.push_back(-1);
  model.loss_and_gradients(prompt, targets, 1, prompt.size());
  const std::size_t d = 32, dk = 8;
  const auto in_grad = model.gradient("layers.0.attn.in_proj_weight");    // [3d, d]: q rows first
  const auto out_grad = model.gradient("layers.0.attn.out_proj.weight");  // [d, d]
  double q_rows = 0.0, other_q_rows = 0.0, out_columns = 0.0;
  for (std::size_t r = 0; r < dk; ++r) {
    for (std::size_t c = 0; c < d; ++c) {
      q_rows += std::abs(in_grad[(1 * dk + r) * d + c]);
      other_q_rows += std::abs(in_grad[(0 * dk + r) * d + c]);
      out_columns += std::abs(out_grad[c * d + 1 * dk + r]);
    }
  }
  CHECK(q_rows == 0.0);
  CHECK(out_columns == 0.0);
  CHECK(other_q_rows > 0.0);
}

TEST_CASE("ablate refuses heads by name and keeps the ablation in force", "[generate][ablation]") {
  attn::Model model(ablation_config());  // 2 layers, 4 heads
  model.ablate({{1, 3}});
  CHECK_THROWS_WITH(model.ablate({{0, 1}, {2, 0}}),
                    ContainsSubstring("cannot ablate layer 2 head 0: the model has layers 0 to 1 "
                                      "and heads 0 to 3"));
  CHECK_THROWS_WITH(model.ablate({{0, 4}}), ContainsSubstring("cannot ablate layer 0 head 4"));
  CHECK_THROWS_WITH(model.ablate({{0, 1, 1.5f}}),
                    ContainsSubstring("the scale of layer 0 head 1 must be between 0 (ablated) "
                                      "and 1 (kept), got 1.5"));
  CHECK_THROWS_WITH(model.ablate({{0, 1, 1.5f}}), Catch::Matchers::EndsWith("got 1.5"));
  CHECK_THROWS_WITH(model.ablate({{0, 1, -0.1f}}), ContainsSubstring("must be between 0"));
  CHECK_THROWS_WITH(model.ablate({{0, 1, std::numeric_limits<float>::quiet_NaN()}}),
                    ContainsSubstring("must be between 0"));
  CHECK_THROWS_WITH(model.ablate({{0, 1}, {0, 1, 0.5f}}),
                    ContainsSubstring("layer 0 head 1 is listed twice in the ablation"));
  CHECK(model.ablated() == std::vector<attn::HeadAblation>{{1, 3}});
}

TEST_CASE("ablated logits match PyTorch's ablation (zeroed or scaled heads before o_proj)",
          "[generate][ablation][golden]") {
  // tests/data/ablation/<case>.safetensors (scripts/data/make-ablation-golden.py): per ablation
  // set s, metadata "ablation.s" = "layer:head:scale,…" and the logits [n, vocab] in float32
  // and float64 of the reference with those heads' attention output scaled before o_proj.
  for (const auto& [folder, name] : {std::pair<std::string, std::string>{"llama", "qwen2-f32"},
                                     {"gpt2", "tiny-f32"},
                                     {"llama", "mistral-f32"}}) {
    INFO(folder + "/" + name);
    const auto model = CheckpointCases{folder}.load(name);
    const auto expected = load_test_data("ablation/" + name + ".safetensors");
    std::vector<std::int32_t> ids;
    for (const double id : expected.f64("ids")) ids.push_back(std::int32_t(id));
    const auto& meta = expected.metadata();
    const std::size_t sets = std::stoul(meta.at("sets"));
    REQUIRE(sets >= 2);
    for (std::size_t s = 0; s < sets; ++s) {
      const std::string key = std::to_string(s);
      std::vector<attn::HeadAblation> heads;
      std::string text = meta.at("ablation." + key);
      INFO("ablation " << text);
      for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = std::min(text.find(',', at), text.size());
        const std::string item = text.substr(at, end - at);
        const std::size_t a = item.find(':'), b = item.rfind(':');
        heads.push_back({std::stoul(item.substr(0, a)), std::stoul(item.substr(a + 1, b - a - 1)),
                         std::stof(item.substr(b + 1))});
        at = end + 1;
      }
      model->ablate(heads);
      const auto out = model->forward(ids, 1, ids.size());
      require_as_accurate_as_torch(out.logits, expected.f64("logits32." + key),
                                   expected.f64("logits64." + key), "ablated logits");
      // The unablated reference differs from the ablated one far beyond the tolerance.
      const auto plain = expected.f64("logits64.plain");
      double moved = 0.0, norm = 0.0;
      const auto want = expected.f64("logits64." + key);
      for (std::size_t i = 0; i < want.size(); ++i) {
        moved += (want[i] - plain[i]) * (want[i] - plain[i]);
        norm += want[i] * want[i];
      }
      CHECK(std::sqrt(moved / norm) > 1e-3);
    }
    model->ablate({});
    require_golden_forward(*model, load_test_data(folder + "/" + name + ".expected.safetensors"));
  }
}
