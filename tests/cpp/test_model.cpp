// The model's config checks, parameter table, forward, checkpoints and determinism, and the
// optimizer's schedule and clipping (the numbers against PyTorch: test_model_golden.cpp).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/io/safetensors.hpp"
#include "attention/model/model.hpp"
#include "attention/rng.hpp"
#include "attention/train/optimizer.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

attn::SmallModelOptions small_config() {
  return {
      .vocab = 13, .context = 8, .d_model = 16, .heads = 4, .layers = 2, .mlp = true, .seed = 7};
}

std::vector<std::int32_t> sequence(std::size_t count, std::uint32_t seed, std::size_t vocab) {
  std::vector<std::int32_t> ids(count);
  attn::NumpyRandomState rng(seed);
  for (auto& id : ids) id = std::int32_t(rng.next_u32() % vocab);
  return ids;
}

}  // namespace

TEST_CASE("model config out of bounds: the error names the field, the bound and the value",
          "[model]") {
  const auto fails = [](auto change, const std::string& message) {
    attn::SmallModelOptions c = small_config();
    change(c);
    REQUIRE_THROWS_WITH(attn::Model(c), ContainsSubstring(message));
  };
  fails([](auto& c) { c.vocab = 513; }, "vocab must be between 2 and 512, got 513");
  fails([](auto& c) { c.layers = 5; }, "layers must be between 1 and 4, got 5");
  fails([](auto& c) { c.layers = 0; }, "layers must be between 1 and 4, got 0");
  fails([](auto& c) { c.context = 0; }, "context must be between 1 and 1024, got 0");
  fails([](auto& c) { c.d_model = 600; }, "d_model must be between 1 and 512, got 600");
  fails([](auto& c) { c.heads = 3; }, "d_model 16 is not divisible by heads 3");
  fails([](auto& c) { c.positional = attn::PositionalKind::Alibi; }, "got 'alibi'");
  fails(
      [](auto& c) {
        c.d_model = 15;
        c.heads = 3;
        c.positional = attn::PositionalKind::Rope;
      },
      "needs an even d_k = d_model / heads, got 5");
}

TEST_CASE("parameter table: docs/API.md's names and shapes in one contiguous buffer", "[model]") {
  attn::SmallModelOptions c = small_config();
  attn::Model model(c);
  std::vector<std::string> names;
  std::size_t offset = 0;
  for (const auto& info : model.parameter_table()) {
    names.push_back(info.name);
    CHECK(info.offset == offset);
    offset += info.size;
  }
  CHECK(offset == model.parameter_count());
  const std::vector<std::string> layer = {
      "ln1.weight",           "ln1.bias",           "attn.in_proj_weight", "attn.in_proj_bias",
      "attn.out_proj.weight", "attn.out_proj.bias", "ln2.weight",          "ln2.bias",
      "mlp.fc.weight",        "mlp.fc.bias",        "mlp.proj.weight",     "mlp.proj.bias"};
  std::vector<std::string> expected = {"embed.weight", "pos.weight"};
  for (int i = 0; i < 2; ++i) {
    for (const auto& n : layer) expected.push_back("layers." + std::to_string(i) + "." + n);
  }
  expected.insert(expected.end(), {"ln_f.weight", "ln_f.bias", "unembed.weight"});
  CHECK(names == expected);
  CHECK(model.parameter_info("layers.1.attn.in_proj_weight").shape ==
        std::vector<std::size_t>{48, 16});
  CHECK(model.parameter_info("layers.0.mlp.proj.weight").shape == std::vector<std::size_t>{16, 64});
  CHECK(model.parameter_info("pos.weight").shape == std::vector<std::size_t>{8, 16});
  CHECK(model.parameter("ln_f.weight")[3] == 1.0f);
  CHECK(model.parameter("layers.0.attn.in_proj_bias")[5] == 0.0f);
  REQUIRE_THROWS_WITH(model.parameter("layers.2.ln1.weight"),
                      "this model has no parameter 'layers.2.ln1.weight'");

  c.tied = true;
  c.bias = false;
  c.layer_norm = false;
  c.mlp = false;
  c.positional = attn::PositionalKind::Rope;
  attn::Model bare(c);
  names.clear();
  for (const auto& info : bare.parameter_table()) names.push_back(info.name);
  CHECK(names == std::vector<std::string>{"embed.weight", "layers.0.attn.in_proj_weight",
                                          "layers.0.attn.out_proj.weight",
                                          "layers.1.attn.in_proj_weight",
                                          "layers.1.attn.out_proj.weight"});
}

TEST_CASE("seeded init: the same seed gives the same weights, another seed others", "[model]") {
  attn::SmallModelOptions c = small_config();
  attn::Model a(c), b(c);
  CHECK(std::vector<float>(a.parameters().begin(), a.parameters().end()) ==
        std::vector<float>(b.parameters().begin(), b.parameters().end()));
  c.seed = 8;
  attn::Model other(c);
  CHECK(std::vector<float>(a.parameters().begin(), a.parameters().end()) !=
        std::vector<float>(other.parameters().begin(), other.parameters().end()));
  // N(0, 0.02²) embeddings: the sample standard deviation is near 0.02
  const auto embed = a.parameter("embed.weight");
  double sum = 0.0;
  for (float v : embed) sum += double(v) * v;
  CHECK(std::abs(std::sqrt(sum / double(embed.size())) - 0.02) < 0.003);
}

TEST_CASE("forward: logits and causal attention of every layer; bad input is an error", "[model]") {
  attn::Model model(small_config());
  const std::size_t batch = 2, n = 6;
  const auto ids = sequence(batch * n, 3, 13);
  const auto out = model.forward(ids, batch, n);
  CHECK(out.logits.size() == batch * n * 13);
  REQUIRE(out.attention.size() == 2);
  for (const auto& att : out.attention) {
    REQUIRE(att.size() == batch * 4 * n * n);
    for (std::size_t bh = 0; bh < batch * 4; ++bh) {
      for (std::size_t i = 0; i < n; ++i) {
        double sum = 0.0;
        for (std::size_t j = 0; j < n; ++j) {
          const float a = att[(bh * n + i) * n + j];
          if (j > i) CHECK(a == 0.0f);
          sum += a;
        }
        CHECK(std::abs(sum - 1.0) < 1e-5);
      }
    }
  }
  // causal: changing the last token leaves every earlier position's logits unchanged
  const std::vector<float> before(out.logits.begin(), out.logits.end());
  auto changed = ids;
  changed[n - 1] = (changed[n - 1] + 1) % 13;
  const auto after = model.forward(changed, batch, n);
  for (std::size_t i = 0; i < (n - 1) * 13; ++i) CHECK(after.logits[i] == before[i]);
  CHECK(std::vector<float>(after.logits.begin() + (n - 1) * 13, after.logits.begin() + n * 13) !=
        std::vector<float>(before.begin() + (n - 1) * 13, before.begin() + n * 13));

  REQUIRE_THROWS_WITH(model.forward(ids, batch, 7),
                      "ids has 12 values, expected batch * n = 2 * 7 = 14");
  REQUIRE_THROWS_WITH(model.forward(sequence(9, 1, 13), 1, 9),
                      "n must be between 1 and the context 8, got 9");
  REQUIRE_THROWS_WITH(model.forward(std::vector<std::int32_t>(8 * 300000), 300000, 8),
                      "batch 300000 × heads 4 × n² 64 attention weights per layer exceed the "
                      "limit of 67108864: lower batch or n");
  auto bad = ids;
  bad[4] = 13;
  REQUIRE_THROWS_WITH(model.forward(bad, batch, n),
                      "token id 13 at index 4 is out of range: the vocabulary has ids 0 to 12");
  std::vector<std::int32_t> targets(batch * n, -1);
  REQUIRE_THROWS_WITH(model.loss_and_gradients(ids, targets, batch, n),
                      "every target is ignored (< 0): there is nothing to learn from");
  targets[2] = 20;
  REQUIRE_THROWS_WITH(model.loss_and_gradients(ids, targets, batch, n),
                      ContainsSubstring("target 20 at index 2 is out of range"));
  // the model still works after the errors
  targets[2] = 3;
  CHECK(std::isfinite(model.loss_and_gradients(ids, targets, batch, n)));
}

TEST_CASE("loss is the mean cross-entropy of the forward's logits over counted targets",
          "[model]") {
  attn::Model model(small_config());
  const std::size_t batch = 2, n = 5;
  const auto ids = sequence(batch * n, 4, 13);
  auto targets = sequence(batch * n, 5, 13);
  targets[0] = targets[7] = -1;
  const auto out = model.forward(ids, batch, n);
  double total = 0.0;
  for (std::size_t r = 0; r < batch * n; ++r) {
    if (targets[r] < 0) continue;
    double sum = 0.0;
    for (std::size_t v = 0; v < 13; ++v) sum += std::exp(double(out.logits[r * 13 + v]));
    total += std::log(sum) - out.logits[r * 13 + std::size_t(targets[r])];
  }
  CHECK(std::abs(model.loss_and_gradients(ids, targets, batch, n) - total / 8) < 1e-5);
}

TEST_CASE("safetensors checkpoint: round trip with the names; another config is an error",
          "[model]") {
  attn::SmallModelOptions c = small_config();
  attn::Model model(c);
  model.parameter("layers.1.mlp.fc.bias")[3] = 0.75f;
  const auto bytes = model.save_safetensors();
  const auto file = attn::safetensors::File::parse(bytes);
  CHECK(file.info("layers.0.attn.in_proj_weight").shape == std::vector<std::size_t>{48, 16});
  CHECK(file.metadata().at("positional") == "learned");
  c.seed = 99;
  attn::Model loaded(c);
  loaded.load_safetensors(bytes);
  CHECK(std::vector<float>(loaded.parameters().begin(), loaded.parameters().end()) ==
        std::vector<float>(model.parameters().begin(), model.parameters().end()));

  attn::SmallModelOptions wider = small_config();
  wider.d_model = 32;
  attn::Model other(wider);
  const auto before = std::vector<float>(other.parameters().begin(), other.parameters().end());
  REQUIRE_THROWS_WITH(other.load_safetensors(bytes),
                      "the checkpoint's tensor 'embed.weight' has shape [13, 16], this model "
                      "needs [13, 32] (another config?)");
  CHECK(std::vector<float>(other.parameters().begin(), other.parameters().end()) == before);
  attn::SmallModelOptions no_mlp = small_config();
  no_mlp.mlp = false;
  attn::Model smaller(no_mlp);
  REQUIRE_THROWS_WITH(smaller.load_safetensors(bytes),
                      ContainsSubstring("is not a parameter of this model (another config?)"));
  REQUIRE_THROWS_WITH(model.load_safetensors(smaller.save_safetensors()),
                      "the checkpoint has no tensor 'layers.0.ln2.weight' [16], which this model "
                      "needs (another config?)");
}

TEST_CASE("training is deterministic: the same seed and batches give bit-identical results",
          "[model]") {
  attn::SmallModelOptions c = small_config();
  c.positional = attn::PositionalKind::Rope;
  const attn::AdamWConfig o{.lr = 1e-2, .warmup_steps = 3, .total_steps = 12};
  const auto train = [&] {
    attn::Model model(c);
    attn::AdamW optimizer(model.parameter_count(), o);
    std::vector<float> losses;
    for (std::uint32_t step = 0; step < 12; ++step) {
      const auto ids = sequence(4 * 8, 100 + step, 13);
      losses.push_back(model.loss_and_gradients(ids, ids, 4, 8));  // learn to copy the token
      attn::clip_grad_norm(model.gradients(), o.clip);
      optimizer.step(model.parameters(), model.gradients());
    }
    losses.insert(losses.end(), model.parameters().begin(), model.parameters().end());
    return losses;
  };
  const auto first = train();
  const auto second = train();
  CHECK(first == second);
  CHECK(first[11] < 0.9f * first[0]);  // and it learns
}

TEST_CASE("AdamW: schedule, clipping and bad settings", "[model]") {
  attn::AdamWConfig o{.lr = 0.01, .warmup_steps = 4, .total_steps = 14, .min_lr = 0.001};
  CHECK(attn::learning_rate(o, 1) == 0.0025);
  CHECK(attn::learning_rate(o, 4) == 0.01);
  CHECK(std::abs(attn::learning_rate(o, 9) - 0.0055) < 1e-15);  // half way down the cosine
  CHECK(attn::learning_rate(o, 14) == 0.001);
  CHECK(attn::learning_rate(o, 20) == 0.001);
  o.total_steps = 0;
  CHECK(attn::learning_rate(o, 100) == 0.01);

  std::vector<float> g{3.0f, 4.0f};
  CHECK(attn::clip_grad_norm(g, 1.0) == 5.0);
  CHECK(std::abs(g[0] - 0.6f) < 1e-6f);
  CHECK(std::abs(g[1] - 0.8f) < 1e-6f);
  std::vector<float> small{0.3f, 0.4f};
  attn::clip_grad_norm(small, 1.0);
  CHECK(small == std::vector<float>{0.3f, 0.4f});

  // one step by hand: p = 1, g = 0.5, lr 0.1, wd 0.1 -> p = 0.99 - 0.1 * 1 (m̂/√v̂ = 1)
  attn::AdamWConfig one;
  one.lr = 0.1;
  one.weight_decay = 0.1;
  attn::AdamW adam(1, one);
  std::vector<float> p{1.0f};
  const std::vector<float> grad{0.5f};
  adam.step(p, grad);
  CHECK(std::abs(p[0] - 0.89f) < 1e-6f);
  CHECK_THROWS_WITH(adam.step(p, std::vector<float>{1.0f, 2.0f}),
                    "AdamW was made for 1 parameters, got 1 parameters and 2 gradients");

  attn::AdamWConfig bad;
  bad.lr = -1;
  CHECK_THROWS_WITH(attn::AdamW(1, bad), ContainsSubstring("lr must be > 0, got -1"));
  bad = {};
  bad.beta2 = 1.0;
  CHECK_THROWS_WITH(attn::AdamW(1, bad), ContainsSubstring("beta2 must be in [0, 1), got 1"));
}

TEST_CASE("trace: every layer's steps from the attention layer, its weights the model's",
          "[model]") {
  for (const bool rope : {false, true}) {
    attn::SmallModelOptions c = small_config();
    c.layers = 3;
    if (rope) c.positional = attn::PositionalKind::Rope;
    attn::Model model(c);
    // non-zero biases, so a bias lost on the way would show
    for (float& v : model.parameter("layers.1.attn.in_proj_bias")) v = 0.3f;
    const auto ids = sequence(7, 9, 13);
    model.trace(ids, 7);
    CHECK_THROWS_WITH(model.traced_layer(3), ContainsSubstring("layer 3 is out of range"));
    const auto out = model.forward(ids, 1, 7);
    for (std::size_t l = 0; l < 3; ++l) {
      INFO("layer " << l << (rope ? " rope" : ""));
      const attn::Trace& trace = model.traced_layer(l).last_result().trace;
      REQUIRE(!trace.steps.empty());
      std::size_t heads_seen = 0;
      for (const auto& step : trace.steps) {
        if (step.kind != attn::StepKind::Weights) continue;
        REQUIRE(step.head >= 0);
        const std::size_t h = std::size_t(step.head);
        for (std::size_t i = 0; i < 49; ++i) {
          CHECK(std::abs(step.data[i] - out.attention[l][h * 49 + i]) < 1e-5f);
        }
        ++heads_seen;
      }
      CHECK(heads_seen == 4);
    }
  }
}

TEST_CASE("attention_input: a standalone layer on it reproduces each layer's attention",
          "[model]") {
  for (const bool layer_norm : {true, false}) {
    for (const auto positional : {attn::PositionalKind::Learned, attn::PositionalKind::Rope}) {
      attn::SmallModelOptions c = small_config();
      c.layer_norm = layer_norm;
      c.positional = positional;
      attn::Model model(c);
      REQUIRE_THROWS_WITH(model.attention_input(0), ContainsSubstring("no forward yet"));
      const auto ids = sequence(7, 3, c.vocab);
      const std::size_t n = ids.size(), d = c.d_model;
      const attn::ModelOutput out = model.forward(ids, 1, n);
      std::vector<std::vector<float>> attention;
      for (const auto& a : out.attention) attention.emplace_back(a.begin(), a.end());
      for (std::size_t l = 0; l < c.layers; ++l) {
        const auto input = model.attention_input(l);
        REQUIRE(input.size() == n * d);
        attn::LayerConfig layer_config;
        layer_config.d_model = d;
        layer_config.heads = c.heads;
        layer_config.bias = c.bias;
        layer_config.positional = positional == attn::PositionalKind::Rope
                                      ? attn::PositionalKind::Rope
                                      : attn::PositionalKind::None;
        attn::AttentionLayer layer(layer_config);
        const std::string prefix = "layers." + std::to_string(l) + ".attn.";
        const auto copy = [&](const std::string& name) {
          const auto values = model.parameter(prefix + name);
          return std::vector<float>(values.begin(), values.end());
        };
        attn::LayerWeights weights;
        weights.in_proj_weight = copy("in_proj_weight");
        weights.in_proj_bias = copy("in_proj_bias");
        weights.out_proj_weight = copy("out_proj.weight");
        weights.out_proj_bias = copy("out_proj.bias");
        layer.set_weights(std::move(weights));
        attn::ForwardOptions options;
        options.n = n;
        options.mask.kind = attn::MaskKind::Causal;
        const auto& result = layer.forward(input, options);
        REQUIRE(result.attention.size() == attention[l].size());
        for (std::size_t i = 0; i < attention[l].size(); ++i) {
          REQUIRE(std::abs(result.attention[i] - attention[l][i]) < 1e-6f);
        }
      }
      REQUIRE_THROWS_WITH(model.attention_input(c.layers), ContainsSubstring("out of range"));
    }
  }
}

TEST_CASE("weights packed once follow every change of the parameters", "[model]") {
  // A forward keeps its weights packed; each way of changing a parameter must show in the next
  // forward exactly as in a model built with the changed parameters from the start.
  const std::size_t n = 6;
  const auto ids = sequence(n, 5, 13);
  const auto logits_of = [&](attn::Model& model) {
    const auto out = model.forward(ids, 1, n);
    return std::vector<float>(out.logits.begin(), out.logits.end());
  };
  const auto fresh_logits = [&](const attn::Model& changed) {
    attn::Model fresh(small_config());
    fresh.load_safetensors(changed.save_safetensors());
    return logits_of(fresh);
  };
  attn::Model model(small_config());
  const auto original = logits_of(model);
  const std::vector<std::string> weights = {
      "layers.0.attn.in_proj_weight", "layers.1.attn.out_proj.weight", "layers.0.mlp.fc.weight",
      "layers.1.mlp.proj.weight", "unembed.weight"};
  for (const auto& name : weights) {
    INFO(name);
    model.parameter(name)[5] += 0.5f;  // a span written after it is handed out
    const auto changed = logits_of(model);
    CHECK(changed != original);
    CHECK(changed == fresh_logits(model));
    model.parameter(name)[5] -= 0.5f;
  }
  model.parameters()[model.parameter_info("unembed.weight").offset] = 2.0f;
  CHECK(logits_of(model) == fresh_logits(model));
  std::vector<float> values = model.parameter_values("layers.1.attn.in_proj_weight");
  values[0] = -1.0f;
  model.set_parameter("layers.1.attn.in_proj_weight", values);
  CHECK(logits_of(model) == fresh_logits(model));
  attn::Model other(small_config());
  other.parameter("layers.0.mlp.proj.weight")[1] = 3.0f;
  model.load_safetensors(other.save_safetensors());
  CHECK(logits_of(model) == logits_of(other));
}

TEST_CASE("forward with the last positions' logits only: those rows of the full logits",
          "[model]") {
  attn::Model model(small_config());
  const std::size_t batch = 3, n = 5, V = 13;
  const auto ids = sequence(batch * n, 9, V);
  const auto full = model.forward(ids, batch, n);
  const std::vector<float> all(full.logits.begin(), full.logits.end());
  std::vector<std::vector<float>> attention;
  for (const auto& a : full.attention) attention.emplace_back(a.begin(), a.end());
  const auto last = model.forward(ids, batch, n, std::nullopt, false);
  REQUIRE(last.logits.size() == batch * V);
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t v = 0; v < V; ++v) {
      INFO("sequence " << b << " token " << v);
      CHECK(last.logits[b * V + v] == all[(b * n + n - 1) * V + v]);
    }
  }
  for (std::size_t l = 0; l < attention.size(); ++l) {
    CHECK(std::vector<float>(last.attention[l].begin(), last.attention[l].end()) == attention[l]);
  }
}
