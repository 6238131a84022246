// Real checkpoints read by name and layout, without their weights: the config.json each repo
// publishes on the Hugging Face Hub (copied as published, key for key) becomes the model its
// card describes, every tensor of its published list (transformers' state_dict names, shapes
// from the config) is matched, and the parameter count is the one its card states.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/model/checkpoint_import.hpp"
#include "attention/model/family.hpp"
#include "published_checkpoints.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

// HuggingFaceTB/SmolLM2-135M (its -Instruct twin's config.json has the same shape keys).
const char* const kSmolLM2 = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 0, "eos_token_id": 0, "head_dim": 64, "hidden_act": "silu", "hidden_size": 576,
  "initializer_range": 0.041666666666666664, "intermediate_size": 1536, "is_llama_config": true,
  "max_position_embeddings": 8192, "mlp_bias": false, "model_type": "llama",
  "num_attention_heads": 9, "num_hidden_layers": 30, "num_key_value_heads": 3,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_interleaved": false, "rope_scaling": null,
  "rope_theta": 100000, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
  "transformers_version": "4.40.1", "use_cache": true, "vocab_size": 49152})";

// Qwen/Qwen2.5-0.5B.
const char* const kQwen25 = R"({
  "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
  "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 896, "initializer_range": 0.02,
  "intermediate_size": 4864, "max_position_embeddings": 32768, "max_window_layers": 24,
  "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24,
  "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
  "sliding_window": 32768, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
  "transformers_version": "4.40.1", "use_cache": true, "use_mrope": false,
  "use_sliding_window": false, "vocab_size": 151936})";

// TinyLlama/TinyLlama-1.1B-Chat-v1.0.
const char* const kTinyLlama = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "bos_token_id": 1,
  "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02,
  "intermediate_size": 5632, "max_position_embeddings": 2048, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 22, "num_key_value_heads": 4,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 10000.0,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.35.0",
  "use_cache": true, "vocab_size": 32000})";

// meta-llama/Llama-3.2-1B (gated: its config as its card publishes it).
const char* const kLlama32 = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 128000, "eos_token_id": 128001, "head_dim": 64, "hidden_act": "silu",
  "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 8192,
  "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 32.0,
  "high_freq_factor": 4.0, "low_freq_factor": 1.0, "original_max_position_embeddings": 8192,
  "rope_type": "llama3"}, "rope_theta": 500000.0, "tie_word_embeddings": true,
  "torch_dtype": "bfloat16", "transformers_version": "4.45.0.dev0", "use_cache": true,
  "vocab_size": 128256})";

// mistralai/Mistral-7B-v0.1.
const char* const kMistral7B = R"({
  "architectures": ["MistralForCausalLM"], "bos_token_id": 1, "eos_token_id": 2,
  "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
  "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "mistral",
  "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 4096,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.34.0.dev0",
  "use_cache": true, "vocab_size": 32000})";

// The tensors a Llama-family checkpoint of this config publishes (transformers' state_dict),
// BF16: name and shape, in the Hub's listing order.
Listing published_tensors(const attn::ModelConfig& c, bool qkv_bias) {
  return published_llama_shaped(c, "BF16", attn::NormPlacement::Pre, attn::QkNorm::None, !c.tied,
                                qkv_bias);
}

struct Published {
  const char* name;
  const char* config;
  std::uint64_t parameters;  // as the model card states it
  std::size_t kv_heads, head_dim;
};

}  // namespace

TEST_CASE("real checkpoints' published configs and tensor lists are read as their cards say",
          "[real]") {
  const Published models[] = {{"SmolLM2-135M", kSmolLM2, 134515008, 3, 64},
                              {"Qwen2.5-0.5B", kQwen25, 494032768, 2, 64},
                              {"TinyLlama-1.1B", kTinyLlama, 1100048384, 4, 64},
                              {"Llama-3.2-1B", kLlama32, 1235814400, 8, 64},
                              {"Mistral-7B-v0.1", kMistral7B, 7241732096, 8, 128}};
  for (const Published& model : models) {
    INFO(model.name);
    const attn::CheckpointConfig config = attn::checkpoint_config(attn::ConfigJson(model.config));
    const attn::AttentionShape shape = attn::attention_shape(config.model);
    CHECK(shape.kv_heads == model.kv_heads);
    CHECK(shape.head_dim == model.head_dim);
    CHECK(attn::parameter_count(config.model) == model.parameters);
    // Every published tensor is a tensor of its family, none is left over, none is missing.
    const auto tensors = published_tensors(config.model, config.family->family == "qwen2");
    std::size_t matched = 0;
    for (const Listed& tensor : tensors) {
      INFO(tensor.name);
      const auto match = attn::match_tensor(*config.family, tensor.name);
      REQUIRE(match);
      ++matched;
    }
    CHECK(matched == tensors.size());
  }
  // Llama 3.2's rope_scaling is applied; Mistral's window is read; Qwen2.5's is not used.
  CHECK_FALSE(
      attn::checkpoint_config(attn::ConfigJson(kLlama32)).model.blocks[0].rope.frequencies.empty());
  CHECK(attn::checkpoint_config(attn::ConfigJson(kMistral7B)).model.blocks[0].window == 4096);
  CHECK(attn::checkpoint_config(attn::ConfigJson(kQwen25)).model.blocks[0].window == 0);
}

TEST_CASE(
    "SmolLM2-135M's published header is accepted, its weights kept 2-byte; Mistral-7B is "
    "too large for the tab",
    "[real]") {
  const attn::CheckpointConfig smol = attn::checkpoint_config(attn::ConfigJson(kSmolLM2));
  const auto [head, size] = header_of(published_tensors(smol.model, false));
  attn::CheckpointImport import({head}, {size}, smol);
  CHECK(import.reads().size() == 2 + 9 * 30);
  std::uint64_t bytes = 0;
  for (const auto& read : import.reads()) bytes += read.end - read.begin;
  CHECK(bytes == 2 * 134515008ull);  // every value read once
  const attn::CheckpointConfig mistral = attn::checkpoint_config(attn::ConfigJson(kMistral7B));
  const auto [big, big_size] = header_of(published_tensors(mistral.model, false));
  CHECK_THROWS_WITH(
      attn::CheckpointImport({big}, {big_size}, mistral),
      ContainsSubstring("too large for the tab: 7241732096 parameters need 14483 MB"));
}
