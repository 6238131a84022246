// Gemma 2 and Gemma 3's text model as checkpoint families (transformers' Gemma2ForCausalLM and
// Gemma3ForCausalLM with Gemma3TextConfig, model_type gemma3_text): their config.json keys
// (Gemma2Config, Gemma3TextConfig; every switch the core does not implement refused by name) and
// their tensors: the Llama family's projections, four (1 + w) RMSNorms per layer (before and after
// the attention and the MLP), a GELU-tanh gated MLP, embeddings × √hidden_size rounded to the
// checkpoint's dtype, query_pre_attn_scalar's attention scale, sliding and full layers
// (layer_types, or the older pattern), tied embeddings. Gemma 2 adds tanh soft-caps of the
// attention scores and the logits; Gemma 3 adds per-head q/k norms and a second RoPE base for its
// sliding layers.
#include <cmath>
#include <cstdio>
#include <string>

#include "attention/error.hpp"
#include "attention/io/gguf.hpp"
#include "attention/message_text.hpp"
#include "attention/model/checkpoint_config.hpp"
#include "attention/model/families/llama_shaped.hpp"
#include "attention/model/family.hpp"
#include "attention/ops/half.hpp"

namespace attn {

namespace {

// √hidden_size rounded to the model's dtype (config.json's torch_dtype, or dtype), as
// transformers rounds the normalizer to the activations' dtype (Gemma2Model's
// torch.tensor(hidden_size**0.5, dtype=…), Gemma3TextScaledWordEmbedding's embed_scale.to(…)).
double embedding_scale(const ConfigJson& config, std::size_t d_model) {
  const std::string key = config.has("torch_dtype") ? "torch_dtype" : "dtype";
  const std::string dtype = config.string_or(key, "float32");
  const float scale = float(std::sqrt(double(d_model)));
  if (dtype == "float32") return scale;
  if (dtype == "bfloat16") return round_to_half(scale, HalfKind::BF16);
  if (dtype == "float16") return round_to_half(scale, HalfKind::F16);
  throw Error("config.json's " + key + " is '" + dtype.substr(0, 40) +
              "'; supported: float32, bfloat16 and float16 (the dtype Gemma rounds its "
              "embeddings' scale √hidden_size to)");
}

// A soft-cap: the family's default when the key is absent (Gemma 2's caps; Gemma 3's none, 0),
// none when it is null.
double softcap(const ConfigJson& config, const char* key, double absent) {
  if (config.is_null(key)) return 0.0;
  if (!config.has(key)) return absent;
  const double cap = config.number_or(key, absent);
  if (!(cap > 0.0 && std::isfinite(cap))) {
    throw Error("config.json's " + std::string(key) + " is " + number_text(cap) +
                "; supported: a positive number or null (no cap)");
  }
  return cap;
}

// Which layers slide: layer_types when given ("sliding_attention" | "full_attention", one per
// layer), else every layer i with (i + 1) % pattern != 0.
std::vector<bool> sliding_layers(const ConfigJson& config, std::size_t layers,
                                 std::size_t pattern) {
  const std::vector<std::string> types = config.strings_or_empty("layer_types");
  std::vector<bool> sliding(layers);
  if (types.empty()) {
    for (std::size_t i = 0; i < layers; ++i) sliding[i] = (i + 1) % pattern != 0;
    return sliding;
  }
  if (types.size() != layers) {
    throw Error("config.json's layer_types has " + std::to_string(types.size()) +
                " entries for num_hidden_layers " + std::to_string(layers));
  }
  for (std::size_t i = 0; i < layers; ++i) {
    if (types[i] != "sliding_attention" && types[i] != "full_attention") {
      throw Error("config.json's layer_types has '" + types[i].substr(0, 40) +
                  "'; supported: sliding_attention and full_attention");
    }
    sliding[i] = types[i] == "sliding_attention";
  }
  return sliding;
}

// What Gemma 2 and 3 share: sizes, (1 + w) RMSNorms before and after each sublayer, the GELU
// gated MLP, the embeddings' scale, the attention scale, the sliding window (the window of the
// layers `sliding` marks), tied embeddings.
ModelConfig gemma_config(const ConfigJson& config, const FamilyDescription& family,
                         BlockConfig& block) {
  // Gemma2Config's and Gemma3TextConfig's defaults: 4 key/value heads of 256.
  ModelConfig m = llama_shaped_sizes(config, family, {.kv_heads = 4, .head_dim = 256});
  const std::string act = config.string_or("hidden_activation", "gelu_pytorch_tanh");
  if (act == "gelu_pytorch_tanh" || act == "gelu_new") {
    block.activation = Activation::GeluTanh;
  } else if (act == "gelu") {
    block.activation = Activation::GeluErf;
  } else {
    throw Error("config.json's hidden_activation is '" + act.substr(0, 40) +
                "'; supported: gelu_pytorch_tanh (as every Gemma checkpoint has), gelu_new and "
                "gelu");
  }
  m.norm = NormKind::GemmaRmsNorm;
  m.norm_eps = config.number_or("rms_norm_eps", 1e-6);
  m.tied = config.boolean_or("tie_word_embeddings", true);
  const bool attention_bias = config.boolean_or("attention_bias", false);
  m.bias = {attention_bias, attention_bias, false};
  m.embedding_scale = embedding_scale(config, m.d_model);
  block.mlp = MlpKind::Gated;
  block.norms = NormPlacement::Both;
  block.rope.pairing = RopePairing::RotateHalf;
  const double scalar = config.number_or("query_pre_attn_scalar", 256.0);
  if (!(scalar > 0.0 && std::isfinite(scalar))) {
    throw Error("config.json's query_pre_attn_scalar is " + number_text(scalar) +
                "; supported: a positive number (the scores are scaled by its −½ power)");
  }
  block.attention_scale = std::pow(scalar, -0.5);
  return m;
}

ModelConfig gemma2_config(const ConfigJson& config, const FamilyDescription& family) {
  refuse_rope_parameters(config, "rope_theta and rope_scaling");
  BlockConfig block;
  ModelConfig m = gemma_config(config, family, block);
  block.logit_softcap = softcap(config, "attn_logit_softcapping", 50.0);
  m.final_softcap = softcap(config, "final_logit_softcapping", 30.0);
  block.rope.base = config.number_or("rope_theta", 10000.0);
  const std::size_t window = config.count_or("sliding_window", 4096);
  const std::vector<bool> sliding = sliding_layers(config, m.layers, 2);  // even layers slide
  set_uniform_blocks(m, block);
  for (std::size_t i = 0; i < m.blocks.size() && i < sliding.size(); ++i) {
    m.blocks[i].window = sliding[i] ? window : 0;
  }
  validate_checkpoint(m);
  const auto frequencies =
      rope_scaling_frequencies(config, m.head_dim, block.rope.base, RopeScaling::None);
  for (BlockConfig& each : m.blocks) each.rope.frequencies = frequencies;
  return m;
}

ModelConfig gemma3_text_config(const ConfigJson& config, const FamilyDescription& family) {
  refuse_rope_parameters(config, "rope_theta, rope_local_base_freq and rope_scaling");
  if (config.boolean_or("use_bidirectional_attention", false)) {
    throw Error(
        "config.json has use_bidirectional_attention true (EmbeddingGemma's encoder); "
        "supported: false (causal attention)");
  }
  BlockConfig block;
  ModelConfig m = gemma_config(config, family, block);
  block.qk_norm = QkNorm::PerHead;
  // Gemma 3 never reads attn_logit_softcapping (its attention passes no cap); its final cap
  // defaults to none.
  m.final_softcap = softcap(config, "final_logit_softcapping", 0.0);
  const std::size_t window = config.count_or("sliding_window", 4096);
  const std::size_t pattern = config.count_or("sliding_window_pattern", 6);
  if (pattern == 0) throw Error("config.json needs a positive sliding_window_pattern, got 0");
  const std::vector<bool> sliding = sliding_layers(config, m.layers, pattern);
  // Sliding layers turn by rope_local_base_freq, unscaled; full ones by rope_theta, scaled as
  // rope_scaling says.
  const double local_base = config.number_or("rope_local_base_freq", 10000.0);
  const double global_base = config.number_or("rope_theta", 1000000.0);
  set_uniform_blocks(m, block);
  for (std::size_t i = 0; i < m.blocks.size() && i < sliding.size(); ++i) {
    m.blocks[i].window = sliding[i] ? window : 0;
    m.blocks[i].rope.base = sliding[i] ? local_base : global_base;
  }
  validate_checkpoint(m);
  const auto frequencies =
      rope_scaling_frequencies(config, m.head_dim, global_base, RopeScaling::Linear);
  for (std::size_t i = 0; i < m.blocks.size(); ++i) {
    if (sliding[i] || frequencies.empty()) continue;
    m.blocks[i].rope.frequencies = frequencies;
    m.blocks[i].rope.scaling = RopeScaling::Linear;
  }
  return m;
}

// query_pre_attn_scalar, which GGUF does not store, as llama.cpp derives it: head_dim
// (attention.key_length), or hidden_size / heads for the 27 B models (their block_count:
// Gemma 2's 46, Gemma 3's 62), as gemma_pytorch's configs give.
std::string gemma_attention_scalar(const gguf::Metadata& metadata, const std::string& prefix,
                                   std::int64_t layers_27b) {
  const std::int64_t d = metadata.integer(prefix + "embedding_length");
  const std::int64_t heads = metadata.integer(prefix + "attention.head_count");
  const std::string key_length = prefix + "attention.key_length";
  const bool large = metadata.integer(prefix + "block_count") == layers_27b;
  const std::int64_t scalar = large || !metadata.contains(key_length)
                                  ? (heads > 0 ? d / heads : 0)
                                  : metadata.integer(key_length);
  return "\"query_pre_attn_scalar\": " + std::to_string(scalar);
}

std::string gemma2_gguf_config(const gguf::Metadata& metadata, const std::string& prefix) {
  return gemma_attention_scalar(metadata, prefix, 46);
}

// Gemma 3's sliding layers turn by 10000 in llama.cpp (rope_freq_base_train_swa), unless the file
// says otherwise (rope.freq_base_swa).
std::string gemma3_gguf_config(const gguf::Metadata& metadata, const std::string& prefix) {
  const std::string local = prefix + "rope.freq_base_swa";
  char base[64];
  std::snprintf(base, sizeof base, "\"rope_local_base_freq\": %.17g",
                metadata.contains(local) ? metadata.number(local) : 10000.0);
  return gemma_attention_scalar(metadata, prefix, 62) + ", " + base;
}

// How llama.cpp's converter writes Gemma 2 and 3 (convert_hf_to_gguf.py, Gemma2Model and
// Gemma3Model) and its graph reads them: the Llama names, the four norms as attn_norm,
// attn_post_norm, ffn_norm and ffn_post_norm, Gemma 3's q/k norms as attn_q_norm and attn_k_norm,
// every norm weight stored 1 + w (PlusOne), no lm_head (tied); the soft-caps (Gemma 2), the
// window (attention.sliding_window), Gemma 3's global base (rope.freq_base) and linear scaling.
// What the file does not say is llama.cpp's: GELU's tanh form, Gemma 2's even layers sliding and
// Gemma 3's five of every six (set_swa_pattern), the scores' scale (gemma_attention_scalar), the
// embeddings scaled by √hidden_size in float32.
FamilyGguf gemma_gguf(std::string_view architecture, bool gemma3) {
  const std::string blk = "blk.{i}.", m = "model.layers.{i}.";
  const auto norm = std::optional(StoredLayout::PlusOne);
  std::vector<GgufTensorName> tensors{
      {"token_embd.weight", "model.embed_tokens.weight", {}},
      {blk + "attn_norm.weight", m + "input_layernorm.weight", norm}};
  const std::pair<const char*, const char*> attention[] = {
      {"attn_q", "q_proj"}, {"attn_k", "k_proj"}, {"attn_v", "v_proj"}, {"attn_output", "o_proj"}};
  for (const auto& [gguf, stored] : attention) {
    for (const char* part : {".weight", ".bias"}) {
      tensors.push_back({blk + gguf + part, m + "self_attn." + stored + part, {}});
    }
  }
  tensors.push_back({blk + "attn_q_norm.weight", m + "self_attn.q_norm.weight", norm});
  tensors.push_back({blk + "attn_k_norm.weight", m + "self_attn.k_norm.weight", norm});
  tensors.push_back({blk + "attn_post_norm.weight", m + "post_attention_layernorm.weight", norm});
  tensors.push_back({blk + "ffn_norm.weight", m + "pre_feedforward_layernorm.weight", norm});
  for (const auto& [gguf, stored] :
       {std::pair{"ffn_gate", "gate_proj"}, std::pair{"ffn_up", "up_proj"},
        std::pair{"ffn_down", "down_proj"}}) {
    for (const char* part : {".weight", ".bias"}) {
      tensors.push_back({blk + gguf + part, m + "mlp." + stored + part, {}});
    }
  }
  tensors.push_back({blk + "ffn_post_norm.weight", m + "post_feedforward_layernorm.weight", norm});
  tensors.push_back({"output_norm.weight", "model.norm.weight", norm});
  tensors.push_back({"output.weight", "lm_head.weight", {}});
  std::vector<GgufConfigKey> keys = llama_shaped_gguf_config_keys();
  keys.push_back({"attention.sliding_window", "sliding_window"});
  if (gemma3) {
    keys.push_back({"final_logit_softcapping", "final_logit_softcapping"});
  } else {
    keys.push_back({"attn_logit_softcapping", "attn_logit_softcapping"});
    keys.push_back({"final_logit_softcapping", "final_logit_softcapping"});
  }
  return FamilyGguf{
      .architecture = architecture,
      .tensors = std::move(tensors),
      .config_keys = std::move(keys),
      .implied_config = gemma3 ? "\"hidden_activation\": \"gelu_pytorch_tanh\", "
                                 "\"sliding_window_pattern\": 6"
                               : "\"hidden_activation\": \"gelu_pytorch_tanh\"",
      .derived_config = gemma3 ? gemma3_gguf_config : gemma2_gguf_config,
      .linear_rope_scaling = gemma3,
  };
}

}  // namespace

const FamilyDescription& gemma2_family() {
  static const FamilyDescription gemma2 = llama_shaped_description(
      "gemma2", "Gemma 2", "supported: Gemma 2 checkpoints (Gemma2ForCausalLM)",
      llama_shaped_tensors(NormPlacement::Both, QkNorm::None), gemma2_config, {},
      gemma_gguf("gemma2", false));
  return gemma2;
}

const FamilyDescription& gemma3_text_family() {
  static const FamilyDescription gemma3 = llama_shaped_description(
      "gemma3_text", "Gemma 3",
      "supported: Gemma 3 text checkpoints (Gemma3ForCausalLM, model_type gemma3_text: "
      "gemma-3-270m, gemma-3-1b)",
      llama_shaped_tensors(NormPlacement::Both, QkNorm::PerHead), gemma3_text_config, {},
      gemma_gguf("gemma3", true));
  return gemma3;
}

}  // namespace attn
