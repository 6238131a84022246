// Llama-family checkpoints (llama, qwen2, mistral) read into a Model: PyTorch golden data that
// follows transformers' eager code (tests/data/llama, from scripts/data/make-llama-golden.py),
// sharded files, and every refused config or file's message.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/model/checkpoint_import.hpp"
#include "attention/model/families/gpt2.hpp"
#include "checkpoint_cases.hpp"
#include "test_support.hpp"

namespace st = attn::safetensors;
using Catch::Matchers::ContainsSubstring;

namespace {

const CheckpointCases llama{"llama"};

// The case's tensors, edited by `edit` (false drops one), written as one file.
template <class Edit>
std::vector<std::uint8_t> edited(const std::string& name, Edit edit) {
  return edited_safetensors(llama.checkpoint_bytes(name), edit);
}

}  // namespace

TEST_CASE("Llama, Qwen2 and Mistral checkpoints match transformers' eager forward in PyTorch",
          "[llama]") {
  for (const char* name : {"llama-f32", "llama-bf16", "llama3-f32", "qwen2-f32", "qwen2-bf16",
                           "mistral-f32", "smollm2-f16"}) {
    INFO(name);
    const auto expected = llama.expected(name);
    const auto model = llama.load(name);
    const attn::ModelConfig& config = model->config();
    check_sizes_as_in(expected.metadata(), config_of(llama.config_text(name)), config);
    CHECK(config.norm == attn::NormKind::RmsNorm);
    CHECK(config.blocks[0].mlp == attn::MlpKind::Gated);
    CHECK(config.blocks[0].rope.pairing == attn::RopePairing::RotateHalf);
    require_golden_forward(*model, expected);
  }
}

TEST_CASE("each family's switches are read from config.json", "[llama]") {
  const auto mistral = config_of(llama.config_text("mistral-f32")).model;
  CHECK(mistral.blocks[0].window == 5);
  CHECK_FALSE(mistral.tied);
  CHECK_FALSE(mistral.bias.qkv);
  const auto qwen2 = config_of(llama.config_text("qwen2-f32")).model;
  CHECK(qwen2.blocks[0].window ==
        0);  // sliding_window 4096 with use_sliding_window false: no window
  CHECK(qwen2.tied);
  CHECK(qwen2.bias.qkv);
  CHECK_FALSE(qwen2.bias.out);
  CHECK_FALSE(qwen2.bias.mlp);
  CHECK(qwen2.blocks[0].rope.base == 1e6);
  CHECK(qwen2.norm_eps == 1e-6);
  const auto llama3 = config_of(llama.config_text("llama3-f32")).model;
  CHECK(llama3.head_dim == 24);
  CHECK(llama3.bias.qkv);
  CHECK(llama3.bias.out);
  CHECK_FALSE(llama3.bias.mlp);
  // Llama 3's scaling: the longest wavelengths slowed by the factor, the shortest kept.
  REQUIRE(llama3.blocks[0].rope.frequencies.size() == 12);
  CHECK(llama3.blocks[0].rope.scaling == attn::RopeScaling::Llama3);
  CHECK(qwen2.blocks[0].rope.scaling == attn::RopeScaling::None);
  CHECK(llama3.blocks[0].rope.frequencies[0] == attn::rope_frequency(0, 24, 500000.0));
  CHECK(llama3.blocks[0].rope.frequencies[11] == attn::rope_frequency(11, 24, 500000.0) / 8.0);
}

TEST_CASE("a sharded checkpoint loads as its single file does", "[llama]") {
  const auto whole = llama.checkpoint_bytes("mistral-f32");
  const auto file = st::File::parse(whole);
  std::vector<st::TensorToWrite> first, second;
  for (const auto& info : file.tensors()) {
    st::TensorToWrite tensor{info.name, info.dtype, info.shape, {}};
    const auto raw = file.raw(info);
    tensor.bytes.assign(raw.begin(), raw.end());
    // layer 1's tensors and lm_head in the second shard, the rest in the first
    const bool later = info.name.starts_with("model.layers.1.") || info.name == "lm_head.weight";
    (later ? second : first).push_back(std::move(tensor));
  }
  const auto a = st::write(first), b = st::write(second);
  const auto config = config_of(llama.config_text("mistral-f32"));
  const auto sharded = attn::load_checkpoint({a, b}, config);
  const auto single = attn::load_checkpoint({whole}, config);
  const auto pa = sharded->parameters(), pb = single->parameters();
  REQUIRE(pa.size() == pb.size());
  CHECK(std::equal(pa.begin(), pa.end(), pb.begin()));
  CHECK_THROWS_WITH(attn::load_checkpoint({a}, config),
                    ContainsSubstring("no tensor for 'layers.1.ln1.weight' [64] (Mistral name: "
                                      "model.layers.1.input_layernorm.weight)"));
  CHECK_THROWS_WITH(attn::load_checkpoint({a, a, b}, config),
                    ContainsSubstring("the same tensor twice"));
}

TEST_CASE("every switch the core does not implement is refused by name", "[llama]") {
  llama.refuses_listed();  // refusals.json
  // Absent or null: the family's default (no scaling, no window).
  CHECK(config_of(llama.with_key("llama-f32", "rope_scaling", "null"))
            .model.blocks[0]
            .rope.frequencies.empty());
  CHECK(config_of(llama.with_key("mistral-f32", "sliding_window", "null")).model.blocks[0].window ==
        0);
  CHECK(config_of(llama.with_key("llama-f32", "rope_scaling", R"({"rope_type": "default"})"))
            .model.blocks[0]
            .rope.frequencies.empty());
}

TEST_CASE("files that disagree with config.json are refused, naming the tensor", "[llama]") {
  const auto config = config_of(llama.config_text("llama-f32"));
  const auto without = [](const std::string& dropped) {
    return edited("llama-f32", [&](st::TensorToWrite& t) { return t.name != dropped; });
  };
  CHECK_THROWS_WITH(
      attn::load_checkpoint({without("model.layers.1.self_attn.k_proj.weight")}, config),
      ContainsSubstring("no tensor 'model.layers.1.self_attn.k_proj.weight'"));
  CHECK_THROWS_WITH(
      attn::load_checkpoint({without("lm_head.weight")}, config),
      ContainsSubstring("no tensor for 'unembed.weight'") && ContainsSubstring("lm_head.weight"));
  // A bias the config does not have (attention_bias false).
  const auto biased = edited("llama-f32", [](st::TensorToWrite& t) {
    if (t.name == "model.norm.weight") t.name = "model.layers.0.self_attn.q_proj.bias";
    return true;
  });
  CHECK_THROWS_WITH(attn::load_checkpoint({biased}, config),
                    ContainsSubstring("'model.layers.0.self_attn.q_proj.bias'") &&
                        ContainsSubstring("no place for"));
  // k_proj with the query heads' width: the config's num_key_value_heads disagrees.
  const auto wide = config_of(llama.with_key("llama-f32", "num_key_value_heads", "4"));
  CHECK_THROWS_WITH(attn::load_checkpoint({llama.checkpoint_bytes("llama-f32")}, wide),
                    ContainsSubstring("k_proj.weight' has shape [32, 64]") &&
                        ContainsSubstring("num_key_value_heads 4") &&
                        ContainsSubstring("[64, 64]"));
  // Tied embeddings, but an lm_head that differs.
  const auto tied = config_of(llama.with_key("llama-f32", "tie_word_embeddings", "true"));
  CHECK_THROWS_WITH(attn::load_checkpoint({llama.checkpoint_bytes("llama-f32")}, tied),
                    ContainsSubstring("lm_head.weight differs from model.embed_tokens.weight") &&
                        ContainsSubstring("tie_word_embeddings is true"));
  // A GPT-2 file with a Llama config, and the other way round.
  const auto gpt2 = read_file(std::string(ATTN_TEST_DATA_DIR) + "/gpt2/tiny-f32.safetensors");
  CHECK_THROWS_WITH(attn::load_checkpoint({gpt2}, config),
                    ContainsSubstring("this looks like a GPT-2 checkpoint") &&
                        ContainsSubstring("supported: Llama-family checkpoints"));
  attn::Gpt2Config gpt2_config{
      .n_layer = 2, .n_head = 4, .n_embd = 64, .n_positions = 64, .vocab_size = 96};
  CHECK_THROWS_WITH(attn::load_gpt2_checkpoint(llama.checkpoint_bytes("llama-f32"), gpt2_config),
                    ContainsSubstring("this looks like a Llama checkpoint"));
}

TEST_CASE("a Llama model refuses training by name, and forwards within its window", "[llama]") {
  auto model = llama.load("mistral-f32");
  const std::vector<std::int32_t> ids{1, 2, 3, 4, 5, 6, 7, 8};
  CHECK_THROWS_WITH(model->loss_and_gradients(ids, ids, 1, ids.size()),
                    ContainsSubstring("cannot be trained"));
  const auto out = model->forward(ids, 1, ids.size());
  const std::size_t n = ids.size(), heads = 4;
  for (std::size_t l = 0; l < 3; ++l) {
    for (std::size_t h = 0; h < heads; ++h) {
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
          const bool seen = j <= i && j + 5 > i;
          INFO("layer " << l << " head " << h << " query " << i << " key " << j);
          if (!seen) CHECK(out.attention[l][(h * n + i) * n + j] == 0.0f);
          if (seen) CHECK(out.attention[l][(h * n + i) * n + j] > 0.0f);
        }
      }
    }
  }
}

TEST_CASE("the walkthrough's traced layers reproduce every family's attention", "[llama]") {
  for (const char* name :
       {"llama-f32", "llama-bf16", "llama3-f32", "qwen2-f32", "mistral-f32", "smollm2-f16"}) {
    INFO(name);
    auto model = llama.load(name);
    check_traced_weights_match_forward(*model, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3});
    // Each query head reads its group's key/value head, and every key/value head is traced.
    const attn::AttentionShape shape = attn::attention_shape(model->config());
    for (std::size_t l = 0; l < model->config().layers; ++l) {
      INFO("layer " << l);
      std::size_t kv_heads_seen = 0;
      for (const auto& step : model->traced_layer(l).last_result().trace.steps) {
        if (step.kind == attn::StepKind::K) ++kv_heads_seen;
        if (step.kind != attn::StepKind::Weights) continue;
        CHECK(step.kv_head == int(shape.kv_head(std::size_t(step.head))));
      }
      CHECK(kv_heads_seen == shape.kv_heads);
    }
  }
}
