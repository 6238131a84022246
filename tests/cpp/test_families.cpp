// The families of issue 31 read into a Model: GPT-NeoX (Pythia), Qwen3, Gemma 2, Gemma 3 (text),
// OLMo 2 and Phi-3. PyTorch golden data that follows transformers' eager code
// (tests/data/families, from scripts/data/make-family-golden.py): every case's logits and every
// layer's attention within 4× PyTorch float32's own error from its float64 run; each case's
// switches as config.json gives them (the expected file's metadata); ablation and head scores on
// each family; traces and training refused by name where the walkthrough's layer or the backward
// cannot follow; every switch the core does not implement refused by name.
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/layer/explain.hpp"
#include "attention/layer/step_text.hpp"
#include "attention/model/checkpoint_import.hpp"
#include "attention/train/head_ablation.hpp"
#include "attention/train/head_scores.hpp"
#include "checkpoint_cases.hpp"
#include "test_support.hpp"

namespace st = attn::safetensors;
using Catch::Matchers::ContainsSubstring;

namespace {

const CheckpointCases families{"families"};

// Every case of tests/data/families.
const char* const kCases[] = {"pythia-f32",  "pythia-f16",         "neox-sequential-f32",
                              "qwen3-f32",   "qwen3-bf16",         "gemma3-f32",
                              "gemma3-bf16", "gemma3-pattern-f32", "gemma2-f32",
                              "gemma2-bf16", "olmo2-f32",          "olmo2-bf16",
                              "phi3-f32",    "phi3-bf16"};

std::vector<std::int32_t> ids_of(const st::File& expected) {
  std::vector<std::int32_t> ids;
  for (const double id : expected.f64("ids")) ids.push_back(std::int32_t(id));
  return ids;
}

// config.json's text without the member `member` (its exact text, e.g. "\"rotary_pct\": 0.5,").
std::string without(std::string text, const std::string& member) {
  const auto at = text.find(member);
  REQUIRE(at != std::string::npos);
  return text.erase(at, member.size());
}

// "a,b,c" → {"a", "b", "c"}.
std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    parts.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return parts;
}

// max |ours − f64| and max |torch32 − f64| over one tensor.
struct MaxErrors {
  double ours = 0.0, torch32 = 0.0;
};
template <class Ours>
MaxErrors max_errors(const Ours& ours, const std::vector<double>& torch32,
                     const std::vector<double>& f64) {
  MaxErrors e;
  for (std::size_t i = 0; i < f64.size(); ++i) {
    e.ours = std::max(e.ours, std::abs(double(ours[i]) - f64[i]));
    e.torch32 = std::max(e.torch32, std::abs(torch32[i] - f64[i]));
  }
  return e;
}

}  // namespace

TEST_CASE("the new families' checkpoints match transformers' eager forward in PyTorch",
          "[families][golden]") {
  for (const char* name : kCases) {
    INFO(name);
    const auto expected = families.expected(name);
    const auto& meta = expected.metadata();
    const auto number = [&](const char* key) { return std::stoul(meta.at(key)); };
    const auto model = families.load(name);
    const attn::ModelConfig& config = model->config();
    const attn::AttentionShape shape = attn::attention_shape(config);
    check_sizes_as_in(meta, config_of(families.config_text(name)), config);
    // Each layer's window, RoPE base, scaling, rotary width and attention scale as the reference
    // ran them.
    const auto windows = split(meta.at("windows")), bases = split(meta.at("rope_bases"));
    const auto scaling = split(meta.at("rope_scaling"));
    REQUIRE(windows.size() == config.layers);
    for (std::size_t l = 0; l < config.layers; ++l) {
      INFO("layer " << l);
      const attn::BlockConfig& block = config.blocks[l];
      CHECK(block.window == (windows[l] == "none" ? 0 : std::stoul(windows[l])));
      CHECK(block.rope.base == std::stod(bases[l]));
      CHECK(block.rope.rotated(shape.head_dim) == number("rotary_dim"));
      CHECK(block.rope.frequencies.empty() == (scaling[l] == "none"));
      // "none", or "<rope_type>:<factor>" as the reference read it.
      CHECK(attn::rope_scaling_name(block.rope.scaling) ==
            scaling[l].substr(0, scaling[l].find(':')));
      CHECK(attn::attention_shape(config, l).score_scale() ==
            Catch::Approx(std::stod(meta.at("attn_scale"))).epsilon(1e-15));
    }
    if (meta.count("embed_scale")) {
      CHECK(config.embedding_scale == std::stod(meta.at("embed_scale")));
    } else {
      CHECK(config.embedding_scale == 1.0);
    }
    CHECK(config.blocks[0].logit_softcap ==
          (meta.count("attn_softcap") ? std::stod(meta.at("attn_softcap")) : 0.0));
    CHECK(config.final_softcap ==
          (meta.count("final_softcap") ? std::stod(meta.at("final_softcap")) : 0.0));
    if (meta.count("residual")) {
      CHECK(config.blocks[0].parallel_residual == (meta.at("residual") == "parallel"));
    }
    require_golden_forward(*model, expected);

    // The numbers the closing note quotes: max |ours − float64| against 4× max |PyTorch
    // float32 − float64|, on the logits and over every layer's attention.
    const auto ids = ids_of(expected);
    const auto out = model->forward(ids, 1, ids.size());
    const MaxErrors logits =
        max_errors(out.logits, expected.f64("logits32"), expected.f64("logits64"));
    MaxErrors attention;
    for (std::size_t l = 0; l < config.layers; ++l) {
      const std::string layer = std::to_string(l);
      const MaxErrors e = max_errors(out.attention[l], expected.f64("attn32." + layer),
                                     expected.f64("attn64." + layer));
      attention.ours = std::max(attention.ours, e.ours);
      attention.torch32 = std::max(attention.torch32, e.torch32);
    }
    std::printf("%-20s logits max|ours-f64| %.2e (4x torch f32: %.2e); attention %.2e (%.2e)\n",
                name, logits.ours, 4 * logits.torch32, attention.ours, 4 * attention.torch32);
    CHECK(logits.ours <= 4 * logits.torch32);
    CHECK(attention.ours <= 4 * attention.torch32);
  }
}

TEST_CASE("each new family's parameters under our names", "[families]") {
  const auto names = [](const std::string& name) {
    std::vector<std::string> out;
    const auto model = families.load(name);
    for (const auto& info : model->parameter_table()) out.push_back(info.name);
    return out;
  };
  const auto has = [](const std::vector<std::string>& all, const std::string& name) {
    return std::find(all.begin(), all.end(), name) != all.end();
  };
  {
    const auto pythia = names("pythia-f32");
    for (const char* name : {"layers.1.ln1.bias", "layers.1.ln2.bias", "layers.1.attn.in_proj_bias",
                             "layers.1.mlp.fc.bias", "ln_f.bias", "unembed.weight"}) {
      CHECK(has(pythia, name));
    }
    CHECK_FALSE(has(pythia, "layers.0.ln1_post.weight"));
  }
  {
    const auto gemma3 = names("gemma3-f32");
    for (const char* name :
         {"layers.2.ln1.weight", "layers.2.attn.q_norm.weight", "layers.2.attn.k_norm.weight",
          "layers.2.ln1_post.weight", "layers.2.ln2.weight", "layers.2.ln2_post.weight"}) {
      CHECK(has(gemma3, name));
    }
    CHECK_FALSE(has(gemma3, "unembed.weight"));  // tied
    const auto gemma2 = names("gemma2-f32");
    CHECK(has(gemma2, "layers.0.ln2_post.weight"));
    CHECK_FALSE(has(gemma2, "layers.0.attn.q_norm.weight"));
  }
  {
    const auto olmo2 = names("olmo2-f32");
    CHECK(has(olmo2, "layers.1.ln1_post.weight"));
    CHECK(has(olmo2, "layers.1.ln2_post.weight"));
    CHECK_FALSE(has(olmo2, "layers.1.ln1.weight"));  // no norm before a sublayer
    CHECK_FALSE(has(olmo2, "layers.1.ln2.weight"));
    const auto model = families.load("olmo2-f32");
    CHECK(model->parameter_info("layers.0.attn.q_norm.weight").shape ==
          std::vector<std::size_t>{64});
    CHECK(model->parameter_info("layers.0.attn.k_norm.weight").shape ==
          std::vector<std::size_t>{32});
  }
  CHECK(families.load("qwen3-f32")->parameter_info("layers.0.attn.q_norm.weight").shape ==
        std::vector<std::size_t>{16});
  // Phi-3's fused tensors are our in_proj and gated fc as they are.
  const auto phi3 = families.load("phi3-f32");
  CHECK(phi3->parameter_info("layers.0.attn.in_proj_weight").shape ==
        std::vector<std::size_t>{128, 64});
  CHECK(phi3->parameter_info("layers.0.mlp.fc.weight").shape == std::vector<std::size_t>{224, 64});
}

TEST_CASE("GPT-NeoX's query_key_value rows [heads, 3, head_dim] land in our q | k | v blocks",
          "[families]") {
  const auto bytes = families.checkpoint_bytes("pythia-f32");
  const auto file = st::File::parse(bytes);
  const auto stored = file.f32("gpt_neox.layers.1.attention.query_key_value.weight");
  const auto stored_bias = file.f32("gpt_neox.layers.1.attention.query_key_value.bias");
  const auto model = families.load("pythia-f32");
  const auto ours = model->parameter_values("layers.1.attn.in_proj_weight");
  const auto ours_bias = model->parameter_values("layers.1.attn.in_proj_bias");
  const std::size_t d = 64, heads = 4, hd = 16;
  for (std::size_t h = 0; h < heads; ++h) {
    for (std::size_t slot = 0; slot < 3; ++slot) {  // q, k, v
      for (std::size_t c = 0; c < hd; ++c) {
        const std::size_t from = (h * 3 + slot) * hd + c, to = slot * d + h * hd + c;
        CHECK(std::equal(stored.begin() + from * d, stored.begin() + (from + 1) * d,
                         ours.begin() + to * d));
        CHECK(stored_bias[from] == ours_bias[to]);
      }
    }
  }
  // The F16 file's weights kept 2-byte, and the U8 mask buffers ignored.
  const auto f16 = families.load("pythia-f16");
  CHECK(f16->has_half_parameters());
  CHECK(f16->parameter_info("layers.0.attn.in_proj_weight").half == attn::HalfKind::F16);
}

TEST_CASE("head scores and ablation run on every new family", "[families][ablation]") {
  for (const char* name :
       {"pythia-f32", "neox-sequential-f32", "qwen3-f32", "gemma3-f32", "gemma3-pattern-f32",
        "gemma2-f32", "olmo2-f32", "phi3-f32", "gemma2-bf16"}) {
    INFO(name);
    const auto model = families.load(name);
    const attn::ModelConfig& config = model->config();
    const attn::Batch probe = attn::induction_probe(3, 10, config.vocab);
    const auto out = model->forward(probe.ids, 1, probe.n);
    for (std::size_t l = 0; l < config.layers; ++l) {
      const auto scores = attn::head_scores(out.attention[l], config.heads, probe);
      REQUIRE(scores.size() == config.heads);
      for (const attn::HeadScores& s : scores) {
        CHECK(s.previous_token >= 0.0);
        CHECK(s.previous_token <= 1.0);
        CHECK(s.induction >= 0.0);
        CHECK(s.induction <= 1.0);
      }
    }
    const attn::HeadAblationResult ablation = attn::head_ablation(*model, probe);
    REQUIRE(ablation.heads.size() == config.layers);
    double moved = 0.0;
    for (const auto& layer : ablation.heads) {
      REQUIRE(layer.size() == config.heads);
      for (const attn::AblatedHead& head : layer) {
        CHECK(std::isfinite(head.loss));
        CHECK(head.delta == head.loss - ablation.loss);
        moved = std::max(moved, std::abs(head.delta));
      }
    }
    CHECK(moved > 1e-4);  // some head matters to the probe's loss
  }
}

TEST_CASE("ablating a head equals zeroing its out_proj columns in every new family",
          "[families][ablation]") {
  for (const char* name : {"pythia-f32", "neox-sequential-f32", "qwen3-f32", "gemma3-f32",
                           "gemma2-f32", "olmo2-f32", "phi3-f32"}) {
    INFO(name);
    const auto model = families.load(name);
    const auto ids = ids_of(families.expected(name));
    const std::size_t n = ids.size(), layer = model->config().layers - 1, head = 1;
    const attn::AttentionShape shape = attn::attention_shape(model->config(), layer);
    model->ablate({{layer, head}});
    const auto ablated = model->forward(ids, 1, n);
    const std::vector<float> ablated_logits(ablated.logits.begin(), ablated.logits.end());
    model->ablate({});
    const std::string out = "layers." + std::to_string(layer) + ".attn.out_proj.weight";
    const auto weights = model->parameter(out);
    for (std::size_t r = 0; r < model->config().d_model; ++r) {
      std::fill_n(weights.begin() + std::ptrdiff_t(r * shape.q_width() + head * shape.head_dim),
                  shape.head_dim, 0.0f);
    }
    const auto zeroed = model->forward(ids, 1, n);
    double worst = 0.0, scale = 0.0;
    for (std::size_t i = 0; i < ablated_logits.size(); ++i) {
      worst = std::max(worst, std::abs(double(zeroed.logits[i]) - ablated_logits[i]));
      scale = std::max(scale, std::abs(double(ablated_logits[i])));
    }
    CHECK(worst <= 1e-6 * scale);
  }
}

TEST_CASE("training refuses, by name, what the backward does not differentiate", "[families]") {
  const std::vector<std::int32_t> ids{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};  // in every vocabulary
  const auto neox = families.load("neox-sequential-f32");
  const std::vector<std::int32_t> targets(ids.begin() + 1, ids.end());
  const std::vector<std::int32_t> inputs(ids.begin(), ids.end() - 1);
  CHECK_THROWS_WITH(neox->loss_and_gradients(inputs, targets, 1, inputs.size()),
                    ContainsSubstring("cannot be trained: a partial rotary"));
  CHECK_THROWS_WITH(
      families.load("pythia-f32")->loss_and_gradients(inputs, targets, 1, inputs.size()),
      ContainsSubstring("cannot be trained: a parallel residual"));
  CHECK_THROWS_WITH(
      families.load("gemma2-f32")->loss_and_gradients(inputs, targets, 1, inputs.size()),
      ContainsSubstring("cannot be trained: RMSNorm"));
}

TEST_CASE("the walkthrough's traced layers reproduce each new family's attention",
          "[families][trace]") {
  // A partial rotary (Pythia, GPT-NeoX), fused projections and a window on every layer (Phi-3),
  // the model's own scale, soft-capped scores and local and global layers (Gemma 2), q/k norms
  // per head (Qwen3, Gemma 3's 1 + w) and over the whole projection (OLMo 2, whose attention
  // reads the residual stream: no norm before it).
  for (const char* name : kCases) {
    INFO(name);
    const auto model = families.load(name);
    check_traced_weights_match_forward(*model, ids_of(families.expected(name)));
    const attn::AttentionShape shape = attn::attention_shape(model->config());
    for (std::size_t l = 0; l < model->config().layers; ++l) {
      INFO("layer " << l);
      const attn::AttentionLayer& layer = model->traced_layer(l);
      // A soft-capped layer shows the capped scores, with its cap in the equation.
      const double cap = model->config().blocks[l].logit_softcap;
      std::size_t capped = 0;
      for (const auto& step : layer.last_result().trace.steps) {
        if (step.kind != attn::StepKind::Capped) continue;
        ++capped;
        CHECK_THAT(attn::step_text(layer, step).equation, ContainsSubstring("c = 5"));
        for (const float value : step.data) CHECK(std::abs(value) <= float(cap));
      }
      CHECK(capped == (cap > 0.0 ? shape.heads : 0u));
      std::size_t normed = 0;
      for (const auto& step : layer.last_result().trace.steps) {
        normed += step.kind == attn::StepKind::QNormed || step.kind == attn::StepKind::KNormed;
      }
      const bool qk = model->config().blocks[l].qk_norm != attn::QkNorm::None;
      CHECK(normed == (qk ? shape.heads + shape.kv_heads : 0u));
      if (qk) {  // a normalised key, explained: x / rms · w as the forward computed it
        const auto e = attn::explain_cell(layer, "k_normed", 0, 3, 2);
        CHECK(e.terms.size() == (model->config().blocks[l].qk_norm == attn::QkNorm::Whole
                                     ? shape.kv_width()
                                     : shape.head_dim));
      }
      // The rotation's equation says how much of a head turns.
      const std::size_t rotated = model->config().blocks[l].rope.rotated(shape.head_dim);
      for (const auto& step : layer.last_result().trace.steps) {
        if (step.kind != attn::StepKind::QRotated || step.head != 0) continue;
        const attn::StepText text = attn::step_text(layer, step);
        if (rotated != shape.head_dim) {
          CHECK_THAT(text.equation,
                     ContainsSubstring("on the first } r = " + std::to_string(rotated)));
          // A column past r passes through; one before it turns.
          const auto through = attn::explain_cell(layer, "q_rotated", 0, 5, rotated);
          CHECK_THAT(through.summary, ContainsSubstring("passes through"));
          const auto turned = attn::explain_cell(layer, "q_rotated", 0, 5, rotated - 1);
          CHECK(turned.terms.size() == 2);
        } else {
          CHECK_THAT(text.equation, !ContainsSubstring("on the first"));
        }
      }
    }
  }
}

TEST_CASE("each new family's unimplemented switches are refused by name", "[families]") {
  families.refuses_listed();  // refusals.json: each family's unimplemented switches
}

TEST_CASE("each new family's config.json switches, and their defaults", "[families]") {
  // Gemma 2's soft-caps: absent means Gemma2Config's defaults (50, 30), null means none.
  const auto gemma2 =
      config_of(families.with_key("gemma2-f32", "final_logit_softcapping", "null")).model;
  CHECK(gemma2.final_softcap == 0.0);
  CHECK(gemma2.blocks[0].logit_softcap == 5.0);
  const auto defaults = config_of(without(without(families.config_text("gemma2-f32"),
                                                  "\"attn_logit_softcapping\": 5.0,"),
                                          "\"final_logit_softcapping\": 3.0,"))
                            .model;
  CHECK(defaults.blocks[1].logit_softcap == 50.0);
  CHECK(defaults.final_softcap == 30.0);
  // Gemma 2 slides on the even layers; Gemma 3's default pattern is 6 (layers 5, 11, … full).
  CHECK(gemma2.blocks[0].window == 4);
  CHECK(gemma2.blocks[1].window == 0);
  const std::string unpatterned =
      without(families.config_text("gemma3-pattern-f32"), "\"sliding_window_pattern\": 3,");
  const auto gemma3 = config_of(with_key_in(unpatterned, "num_hidden_layers", "7")).model;
  for (std::size_t l = 0; l < 7; ++l) CHECK(gemma3.blocks[l].window == (l == 5 ? 0u : 5u));
  // Gemma's embedding scale rounded to the checkpoint's dtype: √48 in bfloat16 is 6.9375.
  CHECK(config_of(families.config_text("gemma3-bf16")).model.embedding_scale == 6.9375);
  CHECK(config_of(families.with_key("gemma3-f32", "torch_dtype", "\"float16\""))
            .model.embedding_scale == 6.9296875);
  // Gemma 3's linear scaling on the full layer only: θ_i / 8.
  const auto pattern = config_of(families.config_text("gemma3-pattern-f32")).model;
  REQUIRE(pattern.blocks[2].rope.frequencies.size() == 16);
  CHECK(pattern.blocks[2].rope.frequencies[3] == attn::rope_frequency(3, 32, 1e6) / 8.0);
  CHECK(pattern.blocks[0].rope.frequencies.empty());
  CHECK(pattern.blocks[0].rope.base == 10000.0);
  // Phi-3: a null sliding_window is no window; GPT-NeoX: the newer keys alone.
  CHECK(config_of(families.with_key("phi3-f32", "sliding_window", "null")).model.blocks[1].window ==
        0);
  const auto newer = config_of(without(without(families.config_text("neox-sequential-f32"),
                                               "\"rotary_pct\": 0.5,"),
                                       "\"rotary_emb_base\": 25000,"))
                         .model;
  CHECK(newer.blocks[0].rope.rotary_dims == 8);
  CHECK(newer.blocks[0].rope.base == 25000.0);
  CHECK_FALSE(newer.blocks[0].parallel_residual);
  // rotary_ndims = int(head_size · rotary_pct), truncated as Python's int(): 16 · 0.3 → 4.
  CHECK(config_of(families.with_key("pythia-f32", "rotary_pct", "0.3"))
            .model.blocks[0]
            .rope.rotary_dims == 4);
}

TEST_CASE("files that disagree with a new family's config.json are refused, naming the tensor",
          "[families]") {
  const auto config = config_of(families.config_text("qwen3-f32"));
  const auto without = [](const std::string& name, const std::string& dropped) {
    return edited_safetensors(families.checkpoint_bytes(name),
                              [&](st::TensorToWrite& t) { return t.name != dropped; });
  };
  CHECK_THROWS_WITH(attn::load_checkpoint(
                        {without("qwen3-f32", "model.layers.1.self_attn.k_norm.weight")}, config),
                    ContainsSubstring("no tensor for 'layers.1.attn.k_norm.weight' [16]") &&
                        ContainsSubstring("model.layers.1.self_attn.k_norm.weight"));
  CHECK_THROWS_WITH(attn::load_checkpoint(
                        {without("gemma2-f32", "model.layers.0.post_feedforward_layernorm.weight")},
                        config_of(families.config_text("gemma2-f32"))),
                    ContainsSubstring("model.layers.0.post_feedforward_layernorm.weight"));
  // A Llama checkpoint read as Gemma 2 (names alike, norms not) is refused by the missing norm.
  const auto llama = read_file(std::string(ATTN_TEST_DATA_DIR) + "/llama/llama-f32.safetensors");
  CHECK_THROWS_AS(attn::load_checkpoint({llama}, config_of(families.config_text("gemma2-f32"))),
                  attn::Error);
  // Phi-3's fused qkv_proj with a row too few.
  const auto short_qkv =
      edited_safetensors(families.checkpoint_bytes("phi3-f32"), [](st::TensorToWrite& t) {
        if (t.name == "model.layers.0.self_attn.qkv_proj.weight") {
          t.shape[0] -= 1;
          t.bytes.resize(t.bytes.size() - 64 * 4);
        }
        return true;
      });
  CHECK_THROWS_WITH(attn::load_checkpoint({short_qkv}, config_of(families.config_text("phi3-f32"))),
                    ContainsSubstring("'model.layers.0.self_attn.qkv_proj.weight' has shape "
                                      "[127, 64]") &&
                        ContainsSubstring("needs [128, 64]"));
}
