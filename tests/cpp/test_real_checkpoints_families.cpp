// Real checkpoints of the newer families (Pythia, Qwen3, Gemma 3 and 2, OLMo 2, Phi-3) read by
// name and layout, without their weights: each config.json as its Hub page shows it becomes the
// model its card describes, every tensor of its published list (transformers' state_dict names,
// shapes from the config, the published dtype) is matched, the parameter count is the card's,
// and those too large for the tab are refused with both sizes named.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/model/checkpoint_config.hpp"
#include "attention/model/checkpoint_import.hpp"
#include "attention/model/family.hpp"
#include "published_checkpoints.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

// EleutherAI/pythia-70m and -410m. No verbatim copy of either file was found in the stored
// sources; written from the model card's values (layers, model dim, heads; the 2 048-token
// context; 50 304 tokens, which the card's total − non-embedding count implies: 2·50 304·512 =
// 70 426 624 − 18 915 328) under GPTNeoXConfig's key names as Pythia's files spell them
// (rotary_pct, rotary_emb_base, use_parallel_residual), F16 as the card's tensor types say.
// The two sizes differ only in hidden_size (intermediate_size is 4× it), heads and layers.
std::string pythia_config(std::size_t hidden, std::size_t heads, std::size_t layers) {
  std::string text = R"({
  "architectures": ["GPTNeoXForCausalLM"], "bos_token_id": 0, "eos_token_id": 0,
  "hidden_act": "gelu", "hidden_size": HIDDEN, "initializer_range": 0.02,
  "intermediate_size": INTERMEDIATE, "layer_norm_eps": 1e-05, "max_position_embeddings": 2048,
  "model_type": "gpt_neox", "num_attention_heads": HEADS, "num_hidden_layers": LAYERS,
  "rotary_emb_base": 10000, "rotary_pct": 0.25, "tie_word_embeddings": false,
  "torch_dtype": "float16", "use_cache": true, "use_parallel_residual": true,
  "vocab_size": 50304})";
  for (const auto& [key, value] :
       {std::pair{"HIDDEN", hidden}, std::pair{"INTERMEDIATE", 4 * hidden},
        std::pair{"HEADS", heads}, std::pair{"LAYERS", layers}}) {
    const std::string name = key;
    text.replace(text.find(name), name.size(), std::to_string(value));
  }
  return text;
}
const std::string kPythia70mText = pythia_config(512, 8, 6);
const std::string kPythia410mText = pythia_config(1024, 16, 24);
const char* const kPythia70m = kPythia70mText.c_str();
const char* const kPythia410m = kPythia410mText.c_str();

// Qwen/Qwen3-0.6B, verbatim: three independent copies agree key for key (a Rust test's
// QWEN3_06B_CONFIG, a Python QWEN3_06B_CONFIG, and a model report quoting the downloaded
// file's config.json, whose weight list is the 311 tensors published_qwen3 lists, lm_head
// included although tied).
const char* const kQwen3 = R"({
  "architectures": ["Qwen3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu",
  "hidden_size": 1024, "initializer_range": 0.02, "intermediate_size": 3072,
  "max_position_embeddings": 40960, "max_window_layers": 28, "model_type": "qwen3",
  "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 8,
  "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000, "sliding_window": null,
  "tie_word_embeddings": true, "torch_dtype": "bfloat16", "transformers_version": "4.51.0",
  "use_cache": true, "use_sliding_window": false, "vocab_size": 151936})";

// google/gemma-3-270m, verbatim from circuit-tracer's tests (gemma_3_config_dict, a Python dict
// of the file: True/False/None written here as JSON; the dict's trailing "_name_or_path" is the
// test's own and left out).
const char* const kGemma3 = R"({
  "_sliding_window_pattern": 6, "architectures": ["Gemma3ForCausalLM"],
  "attention_bias": false, "attention_dropout": 0.0, "attn_logit_softcapping": null,
  "bos_token_id": 2, "eos_token_id": 1, "final_logit_softcapping": null, "head_dim": 256,
  "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 640, "initializer_range": 0.02,
  "intermediate_size": 2048,
  "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention",
    "sliding_attention", "sliding_attention", "full_attention", "sliding_attention",
    "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention",
    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
    "sliding_attention", "sliding_attention", "full_attention"],
  "max_position_embeddings": 32768, "model_type": "gemma3_text", "num_attention_heads": 4,
  "num_hidden_layers": 18, "num_key_value_heads": 1, "pad_token_id": 0,
  "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_local_base_freq": 10000.0,
  "rope_scaling": null, "rope_theta": 1000000.0, "sliding_window": 512,
  "torch_dtype": "bfloat16", "transformers_version": "4.55.0.dev0",
  "use_bidirectional_attention": false, "use_cache": true, "vocab_size": 262144})";

// google/gemma-2-2b. Two copies found: google/gemma-2-2b-it's file verbatim (an ONNX builder's
// "copy https://huggingface.co/google/gemma-2-2b-it/blob/main/config.json"), and the base
// model's as transformers re-saved it (GEMMA2_CONFIG, "_name_or_path": "google/gemma-2-2b",
// "architectures": ["Gemma2Model"], "transformers_version": "4.44.2"). Their keys are the same;
// this is the -it file's text with the base model's values where they differ: eos_token_id 1
// (not [1, 107]) and torch_dtype float32 (the base repo publishes F32 weights).
const char* const kGemma2 = R"({
  "architectures": ["Gemma2ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "attn_logit_softcapping": 50.0, "bos_token_id": 2, "cache_implementation": "hybrid",
  "eos_token_id": 1, "final_logit_softcapping": 30.0, "head_dim": 256,
  "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh",
  "hidden_size": 2304, "initializer_range": 0.02, "intermediate_size": 9216,
  "max_position_embeddings": 8192, "model_type": "gemma2", "num_attention_heads": 8,
  "num_hidden_layers": 26, "num_key_value_heads": 4, "pad_token_id": 0,
  "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
  "sliding_window": 4096, "torch_dtype": "float32", "transformers_version": "4.42.4",
  "use_cache": true, "vocab_size": 256000})";

// allenai/OLMo-2-0425-1B. No verbatim copy found: the two stored "mirrors" of the file are
// abridged (one lacks max_position_embeddings, the other eos/pad ids). Their union of keys and
// values, with torch_dtype float32 as the Hub's F32 weights are (one mirror says bfloat16).
const char* const kOlmo2 = R"({
  "architectures": ["Olmo2ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "eos_token_id": 100257, "hidden_act": "silu", "hidden_size": 2048,
  "intermediate_size": 8192, "max_position_embeddings": 4096, "model_type": "olmo2",
  "num_attention_heads": 16, "num_hidden_layers": 16, "num_key_value_heads": 16,
  "pad_token_id": 100277, "rms_norm_eps": 1e-06, "rope_theta": 500000,
  "tie_word_embeddings": false, "torch_dtype": "float32", "vocab_size": 100352})";

// microsoft/Phi-3-mini-4k-instruct, verbatim from TensorRT-LLM's tests (PHI3_MINI_4K_CONFIG;
// the same text in two other repositories, one quoting the Hub page's URL).
const char* const kPhi3 = R"({
  "_name_or_path": "Phi-3-mini-4k-instruct", "architectures": ["Phi3ForCausalLM"],
  "attention_dropout": 0.0,
  "auto_map": {"AutoConfig": "configuration_phi3.Phi3Config",
    "AutoModelForCausalLM": "modeling_phi3.Phi3ForCausalLM"},
  "bos_token_id": 1, "embd_pdrop": 0.0, "eos_token_id": 32000, "hidden_act": "silu",
  "hidden_size": 3072, "initializer_range": 0.02, "intermediate_size": 8192,
  "max_position_embeddings": 4096, "model_type": "phi3", "num_attention_heads": 32,
  "num_hidden_layers": 32, "num_key_value_heads": 32, "original_max_position_embeddings": 4096,
  "pad_token_id": 32000, "resid_pdrop": 0.0, "rms_norm_eps": 1e-05, "rope_scaling": null,
  "rope_theta": 10000.0, "sliding_window": 2047, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16", "transformers_version": "4.40.2", "use_cache": true,
  "attention_bias": false, "vocab_size": 32064})";

// GPTNeoXForCausalLM's state_dict (modeling_gpt_neox.py), plus the causal-mask buffers older
// files carry (attention.bias U8 [1, 1, ctx, ctx], attention.masked_bias a scalar), which the
// family ignores.
Listing published_gpt_neox(const attn::ModelConfig& c, const std::string& dtype) {
  const std::size_t d = c.d_model, w = attn::mlp_width(c), v = c.vocab;
  Listing out{{"gpt_neox.embed_in.weight", dtype, {v, d}}};
  for (std::size_t l = 0; l < c.layers; ++l) {
    const std::string p = layer_prefix("gpt_neox.layers.", l);
    out.push_back({p + "attention.bias", "U8", {1, 1, c.context, c.context}});
    out.push_back({p + "attention.masked_bias", dtype, {}});
    out.push_back({p + "attention.dense.bias", dtype, {d}});
    out.push_back({p + "attention.dense.weight", dtype, {d, d}});
    out.push_back({p + "attention.query_key_value.bias", dtype, {3 * d}});
    out.push_back({p + "attention.query_key_value.weight", dtype, {3 * d, d}});
    out.push_back({p + "input_layernorm.bias", dtype, {d}});
    out.push_back({p + "input_layernorm.weight", dtype, {d}});
    out.push_back({p + "mlp.dense_4h_to_h.bias", dtype, {d}});
    out.push_back({p + "mlp.dense_4h_to_h.weight", dtype, {d, w}});
    out.push_back({p + "mlp.dense_h_to_4h.bias", dtype, {w}});
    out.push_back({p + "mlp.dense_h_to_4h.weight", dtype, {w, d}});
    out.push_back({p + "post_attention_layernorm.bias", dtype, {d}});
    out.push_back({p + "post_attention_layernorm.weight", dtype, {d}});
  }
  out.push_back({"gpt_neox.final_layer_norm.bias", dtype, {d}});
  out.push_back({"gpt_neox.final_layer_norm.weight", dtype, {d}});
  out.push_back({"embed_out.weight", dtype, {v, d}});
  return out;
}

// Phi3ForCausalLM's state_dict (modeling_phi3.py): fused qkv_proj and gate_up_proj.
// Phi-3's is Llama's with q|k|v fused into qkv_proj [q + 2·kv, d] and gate|up into
// gate_up_proj [2·w, d].
Listing published_phi3(const attn::ModelConfig& c, const std::string& dtype) {
  const attn::AttentionShape shape = attn::attention_shape(c);
  Listing out;
  for (Listed tensor : published_llama_shaped(c, dtype, attn::NormPlacement::Pre,
                                              attn::QkNorm::None, /*lm_head=*/true)) {
    const auto has = [&](const char* part) { return tensor.name.find(part) != std::string::npos; };
    const auto rename = [&](const std::string& from, const char* to) {
      tensor.name.replace(tensor.name.find(from), from.size(), to);
    };
    if (has("self_attn.k_proj.") || has("self_attn.v_proj.") || has("mlp.up_proj.")) continue;
    if (has("self_attn.q_proj.")) {
      rename("q_proj", "qkv_proj");
      tensor.shape[0] = shape.q_width() + 2 * shape.kv_width();
    }
    if (has("mlp.gate_proj.")) {
      rename("gate_proj", "gate_up_proj");
      tensor.shape[0] *= 2;
    }
    out.push_back(tensor);
  }
  return out;
}

attn::CheckpointConfig read(const char* config) {
  return attn::checkpoint_config(attn::ConfigJson(config));
}

// Every listed tensor is one of the family's or one it ignores.
void check_every_tensor_matched(const attn::FamilyDescription& family, const Listing& tensors) {
  for (const Listed& tensor : tensors) {
    INFO(tensor.name);
    CHECK((attn::match_tensor(family, tensor.name) || attn::is_ignored(family, tensor.name)));
  }
}

// What a card states of a model's shape.
struct Card {
  const char* family;
  std::size_t layers, heads, kv_heads, head_dim, d_model, mlp_width, vocab;
  bool tied;
  std::uint64_t parameters;
};

void check_card(const attn::CheckpointConfig& config, const Card& card) {
  const attn::ModelConfig& m = config.model;
  const attn::AttentionShape shape = attn::attention_shape(m);
  CHECK(config.family->family == card.family);
  CHECK(m.layers == card.layers);
  CHECK(m.blocks.size() == card.layers);
  CHECK(shape.heads == card.heads);
  CHECK(shape.kv_heads == card.kv_heads);
  CHECK(shape.head_dim == card.head_dim);
  CHECK(m.d_model == card.d_model);
  CHECK(attn::mlp_width(m) == card.mlp_width);
  CHECK(m.vocab == card.vocab);
  CHECK(m.tied == card.tied);
  CHECK(attn::parameter_count(m) == card.parameters);
}

// Billions to the card's digits: 596 049 920 → 0.6 (one decimal), 440 467 456 → 0.44 (two).
double billions(std::uint64_t count, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(double(count) / 1e9 * scale) / scale;
}

}  // namespace

TEST_CASE("Pythia-70m and -410m's configs read as GPT-NeoX with their cards' counts", "[real]") {
  struct Pythia {
    const char* config;
    Card card;
    std::uint64_t non_embedding;  // the card's table
  };
  const Pythia models[] = {
      {kPythia70m, {"gpt_neox", 6, 8, 8, 64, 512, 2048, 50304, false, 70426624}, 18915328},
      {kPythia410m, {"gpt_neox", 24, 16, 16, 64, 1024, 4096, 50304, false, 405334016}, 302311424}};
  for (const Pythia& pythia : models) {
    const attn::CheckpointConfig config = read(pythia.config);
    const attn::ModelConfig& m = config.model;
    INFO(m.layers << " layers");
    check_card(config, pythia.card);
    CHECK(attn::parameter_count(m) - 2 * m.vocab * m.d_model == pythia.non_embedding);
    CHECK(m.norm == attn::NormKind::LayerNorm);
    CHECK(m.bias.qkv);
    CHECK(m.bias.out);
    CHECK(m.bias.mlp);
    CHECK(m.context == 2048);
    for (const attn::BlockConfig& block : m.blocks) {
      CHECK(block.rope.rotary_dims == 16);  // int(64 · 0.25)
      CHECK(block.rope.base == 10000.0);
      CHECK(block.parallel_residual);
      CHECK(block.activation == attn::Activation::GeluErf);
      CHECK(block.window == 0);
    }
    check_every_tensor_matched(*config.family, published_gpt_neox(m, "F16"));
  }
}

TEST_CASE("Qwen3-0.6B's config reads with q/k norms, heads wider than hidden / heads, tied",
          "[real]") {
  const attn::CheckpointConfig config = read(kQwen3);
  const attn::ModelConfig& m = config.model;
  // 151 936·1 024 embedding + 28 · (2·1 024·2 048 + 2·1 024·1 024 + 3·1 024·3 072 + 2·128 +
  // 2·1 024) + 1 024.
  check_card(config, {"qwen3", 28, 16, 8, 128, 1024, 3072, 151936, true, 596049920});
  const std::uint64_t non_embedding = attn::parameter_count(m) - m.vocab * m.d_model;
  CHECK(non_embedding == 440467456);
  CHECK(billions(attn::parameter_count(m), 1) == 0.6);  // the card: 0.6B
  CHECK(billions(non_embedding, 2) == 0.44);            // the card: 0.44B non-embedding
  CHECK(m.norm == attn::NormKind::RmsNorm);
  CHECK(m.norm_eps == 1e-6);
  CHECK_FALSE(m.bias.qkv);
  for (const attn::BlockConfig& block : m.blocks) {
    CHECK(block.qk_norm == attn::QkNorm::PerHead);
    CHECK(block.rope.base == 1000000.0);
    CHECK(block.rope.frequencies.empty());
    CHECK(block.window == 0);  // use_sliding_window false
  }
  check_every_tensor_matched(*config.family,
                             published_llama_shaped(m, "BF16", attn::NormPlacement::Pre,
                                                    attn::QkNorm::PerHead, /*lm_head=*/true));
}

TEST_CASE("gemma-3-270m's config reads its local and global layers, two RoPE bases and scales",
          "[real]") {
  const attn::CheckpointConfig config = read(kGemma3);
  const attn::ModelConfig& m = config.model;
  // 262 144·640 + 18 · (640·1 024 + 2·640·256 + 1 024·640 + 2·256 + 3·640·2 048 + 4·640) + 640.
  check_card(config, {"gemma3_text", 18, 4, 1, 256, 640, 2048, 262144, true, 268098176});
  CHECK(std::round(double(attn::parameter_count(m)) / 1e6) == 268.0);  // the card: 268M
  CHECK(m.norm == attn::NormKind::GemmaRmsNorm);
  CHECK(m.embedding_scale == 25.25);  // √640 = 25.298… in bfloat16
  CHECK(m.final_softcap == 0.0);
  for (std::size_t l = 0; l < m.layers; ++l) {
    INFO("layer " << l);
    const attn::BlockConfig& block = m.blocks[l];
    const bool full = l == 5 || l == 11 || l == 17;  // layer_types
    CHECK(block.window == (full ? 0u : 512u));
    CHECK(block.rope.base == (full ? 1000000.0 : 10000.0));  // rope_theta / rope_local_base_freq
    CHECK(block.attention_scale == 1.0 / 16.0);              // query_pre_attn_scalar 256
    CHECK(block.logit_softcap == 0.0);
    CHECK(block.qk_norm == attn::QkNorm::PerHead);
    CHECK(block.norms == attn::NormPlacement::Both);
    CHECK(block.activation == attn::Activation::GeluTanh);
  }
  check_every_tensor_matched(*config.family,
                             published_llama_shaped(m, "BF16", attn::NormPlacement::Both,
                                                    attn::QkNorm::PerHead, /*lm_head=*/false));
}

TEST_CASE("gemma-2-2b, OLMo-2-0425-1B and Phi-3-mini-4k's configs read as their cards say",
          "[real]") {
  const attn::CheckpointConfig gemma2 = read(kGemma2);
  // 256 000·2 304 + 26 · (2·2 304·2 048 + 2·2 304·1 024 + 3·2 304·9 216 + 4·2 304) + 2 304.
  check_card(gemma2, {"gemma2", 26, 8, 4, 256, 2304, 9216, 256000, true, 2614341888});
  CHECK(gemma2.model.final_softcap == 30.0);
  CHECK(gemma2.model.embedding_scale == 48.0);  // √2 304, float32
  for (std::size_t l = 0; l < gemma2.model.layers; ++l) {
    INFO("layer " << l);
    const attn::BlockConfig& block = gemma2.model.blocks[l];
    CHECK(block.window == (l % 2 == 0 ? 4096u : 0u));  // the even layers slide
    CHECK(block.logit_softcap == 50.0);
    CHECK(block.attention_scale == 1.0 / 16.0);
    CHECK(block.rope.base == 10000.0);
    CHECK(block.qk_norm == attn::QkNorm::None);
  }
  check_every_tensor_matched(*gemma2.family,
                             published_llama_shaped(gemma2.model, "F32", attn::NormPlacement::Both,
                                                    attn::QkNorm::None, /*lm_head=*/false));

  const attn::CheckpointConfig olmo2 = read(kOlmo2);
  // 2·100 352·2 048 + 16 · (4·2 048² + 2·2 048 + 3·2 048·8 192 + 2·2 048) + 2 048.
  check_card(olmo2, {"olmo2", 16, 16, 16, 128, 2048, 8192, 100352, false, 1484916736});
  CHECK(billions(attn::parameter_count(olmo2.model), 2) == 1.48);  // the card: 1.48B
  for (const attn::BlockConfig& block : olmo2.model.blocks) {
    CHECK(block.norms == attn::NormPlacement::Post);
    CHECK(block.qk_norm == attn::QkNorm::Whole);
    CHECK(block.rope.base == 500000.0);
  }
  check_every_tensor_matched(*olmo2.family,
                             published_llama_shaped(olmo2.model, "F32", attn::NormPlacement::Post,
                                                    attn::QkNorm::Whole, /*lm_head=*/true));

  const attn::CheckpointConfig phi3 = read(kPhi3);
  // 2·32 064·3 072 + 32 · (3·3 072² + 3 072² + 2·8 192·3 072 + 8 192·3 072 + 2·3 072) + 3 072.
  check_card(phi3, {"phi3", 32, 32, 32, 96, 3072, 8192, 32064, false, 3821079552});
  for (const attn::BlockConfig& block : phi3.model.blocks) {
    CHECK(block.window == 2047);
    CHECK(block.rope.base == 10000.0);
    CHECK(block.rope.rotary_dims == 0);  // no partial_rotary_factor: every column turns
  }
  check_every_tensor_matched(*phi3.family, published_phi3(phi3.model, "BF16"));
}

TEST_CASE(
    "the published headers of Pythia, Qwen3-0.6B and gemma-3-270m are accepted; gemma-2-2b, "
    "OLMo-2-1B and Phi-3-mini are too large for the tab, with both sizes named",
    "[real]") {
  struct Fits {
    const char* name;
    attn::CheckpointConfig config;
    Listing tensors;
    std::uint64_t file_values;  // every read tensor's values (Qwen3: its tied lm_head too)
  };
  const attn::CheckpointConfig pythia70m = read(kPythia70m), pythia410m = read(kPythia410m);
  const attn::CheckpointConfig qwen3 = read(kQwen3), gemma3 = read(kGemma3);
  const Fits fits[] = {
      {"pythia-70m", pythia70m, published_gpt_neox(pythia70m.model, "F16"), 70426624},
      {"pythia-410m", pythia410m, published_gpt_neox(pythia410m.model, "F16"), 405334016},
      // 311 tensors, 751 632 384 values: the model's 596 049 920 and lm_head's 155 582 464.
      {"Qwen3-0.6B", qwen3,
       published_llama_shaped(qwen3.model, "BF16", attn::NormPlacement::Pre, attn::QkNorm::PerHead,
                              true),
       751632384},
      {"gemma-3-270m", gemma3,
       published_llama_shaped(gemma3.model, "BF16", attn::NormPlacement::Both,
                              attn::QkNorm::PerHead, false),
       268098176}};
  for (const Fits& model : fits) {
    INFO(model.name);
    const auto [head, size] = header_of(model.tensors);
    const attn::CheckpointImport import({head}, {size}, model.config);
    std::size_t read_tensors = 0;
    for (const Listed& tensor : model.tensors) read_tensors += tensor.dtype == "U8" ? 0 : 1;
    // Every tensor but Pythia's U8 mask buffers is read, each value once, 2 bytes each (the
    // masked_bias scalars are ignored too: one value per layer).
    const bool neox = model.config.family->family == "gpt_neox";
    CHECK(import.reads().size() == read_tensors - (neox ? model.config.model.layers : 0));
    std::uint64_t bytes = 0;
    for (const auto& each : import.reads()) bytes += each.end - each.begin;
    CHECK(bytes == 2 * model.file_values);
  }
  CHECK(qwen3.model.tied);
  CHECK(published_llama_shaped(qwen3.model, "BF16", attn::NormPlacement::Pre, attn::QkNorm::PerHead,
                               true)
            .size() == 311);

  // gemma-2-2b in F32: 2 614 341 888 · 4 bytes. OLMo-2-1B in F32: 1 484 916 736 · 4. Phi-3-mini
  // in BF16: its 3 820 879 872 matrix values kept 2-byte, its 199 680 norm weights float32.
  struct TooLarge {
    const char* name;
    const char* config;
    const char* dtype;
    const char* sizes;
  };
  const TooLarge too_large[] = {
      {"gemma-2-2b", kGemma2, "F32", "too large for the tab: 2614341888 parameters need 10457 MB"},
      {"OLMo-2-0425-1B", kOlmo2, "F32",
       "too large for the tab: 1484916736 parameters need 5939 MB"},
      {"Phi-3-mini-4k", kPhi3, "BF16",
       "too large for the tab: 3821079552 parameters need 7642 MB"}};
  for (const TooLarge& model : too_large) {
    INFO(model.name);
    const attn::CheckpointConfig config = read(model.config);
    const std::string family(config.family->family);
    const Listing tensors = family == "gemma2"  ? published_llama_shaped(config.model, model.dtype,
                                                                         attn::NormPlacement::Both,
                                                                         attn::QkNorm::None, false)
                            : family == "olmo2" ? published_llama_shaped(config.model, model.dtype,
                                                                         attn::NormPlacement::Post,
                                                                         attn::QkNorm::Whole, true)
                                                : published_phi3(config.model, model.dtype);
    const auto [head, size] = header_of(tensors);
    CHECK_THROWS_WITH(attn::CheckpointImport({head}, {size}, config),
                      ContainsSubstring(model.sizes) && ContainsSubstring("the limit is 3221 MB"));
  }
}
