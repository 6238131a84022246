// Qwen3 (transformers' Qwen3ForCausalLM) as a checkpoint family: its config.json keys
// (Qwen3Config; every switch the core does not implement refused by name) and its tensors: the
// Llama family's, plus per-head RMSNorms of q and k (q_norm, k_norm: weight [head_dim]) before
// RoPE; head_dim is its own key (Qwen3-0.6B: 16 heads of 128 over a hidden size of 1 024).
#include <string>

#include "attention/error.hpp"
#include "attention/model/checkpoint_config.hpp"
#include "attention/model/families/llama_shaped.hpp"
#include "attention/model/family.hpp"

namespace attn {

namespace {

std::vector<FamilyTensor> qwen3_tensors() {
  using enum Dim;
  const std::string m = "model.layers.{i}.", ours = "layers.{i}.";
  std::vector<FamilyTensor> tensors{{"model.embed_tokens.weight", "embed.weight", {Vocab, DModel}}};
  tensors.push_back({m + "input_layernorm.weight", ours + "ln1.weight", {DModel}});
  add_llama_attention(tensors, m + "self_attn.", ours);
  tensors.push_back({m + "self_attn.q_norm.weight", ours + "attn.q_norm.weight", {HeadDim}});
  tensors.push_back({m + "self_attn.k_norm.weight", ours + "attn.k_norm.weight", {HeadDim}});
  tensors.push_back({m + "post_attention_layernorm.weight", ours + "ln2.weight", {DModel}});
  add_llama_mlp(tensors, m + "mlp.", ours);
  tensors.push_back({"model.norm.weight", "ln_f.weight", {DModel}});
  tensors.push_back(
      {"lm_head.weight", "unembed.weight", {Vocab, DModel}, StoredLayout::Unembedding});
  return tensors;
}

ModelConfig qwen3_config(const ConfigJson& config, const FamilyDescription& family) {
  refuse_rope_parameters(config, "rope_theta and rope_scaling");
  // Qwen3Config's head_dim defaults to 128 whatever hidden_size / num_attention_heads is.
  ModelConfig m = llama_shaped_sizes(config, family, {.kv_heads = 0, .head_dim = 128});
  const std::string act = config.string_or("hidden_act", "silu");
  if (act != "silu") {
    throw Error("config.json's hidden_act is '" + act.substr(0, 40) +
                "'; supported: silu (SwiGLU, as every Qwen3 checkpoint has)");
  }
  if (config.boolean_or("use_sliding_window", false)) {
    throw Error(
        "config.json has use_sliding_window true (Qwen3's sliding window on the layers from "
        "max_window_layers on); supported: false");
  }
  for (const std::string& type : config.strings_or_empty("layer_types")) {
    if (type != "full_attention") {
      throw Error("config.json's layer_types has '" + type.substr(0, 40) +
                  "'; supported: full_attention on every layer");
    }
  }
  m.norm = NormKind::RmsNorm;
  m.norm_eps = config.number_or("rms_norm_eps", 1e-6);
  m.tied = config.boolean_or("tie_word_embeddings", false);
  const bool attention_bias = config.boolean_or("attention_bias", false);
  m.bias = {attention_bias, attention_bias, false};
  BlockConfig block;
  block.mlp = MlpKind::Gated;
  block.activation = Activation::Silu;
  block.qk_norm = QkNorm::PerHead;
  block.rope.pairing = RopePairing::RotateHalf;
  block.rope.base = config.number_or("rope_theta", 10000.0);
  set_uniform_blocks(m, block);
  validate_checkpoint(m);
  const auto frequencies =
      rope_scaling_frequencies(config, m.head_dim, block.rope.base, RopeScalingTypes::None,
                               "Qwen3's long-context scaling (yarn) is not implemented");
  for (BlockConfig& each : m.blocks) each.rope.frequencies = frequencies;
  return m;
}

}  // namespace

const FamilyDescription& qwen3_family() {
  static const FamilyDescription qwen3{
      .family = "qwen3",
      .model_type = "qwen3",
      .display_name = "Qwen3",
      .supported = "supported: Qwen3 checkpoints (Qwen3ForCausalLM)",
      .name_prefix = "",
      .size_keys = {"num_hidden_layers", "num_attention_heads", "hidden_size",
                    "max_position_embeddings", "", "vocab_size"},
      .tensors = qwen3_tensors(),
      .ignored = {},
      .read_config = qwen3_config,
  };
  return qwen3;
}

}  // namespace attn
