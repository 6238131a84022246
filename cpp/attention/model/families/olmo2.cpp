// OLMo 2 (transformers' Olmo2ForCausalLM: AllenAI's fully open models) as a checkpoint family: its
// config.json keys (Olmo2Config; every switch the core does not implement refused by name) and its
// tensors: the Llama family's projections and SwiGLU MLP, RMSNorms after each sublayer only
// (post_attention_layernorm, post_feedforward_layernorm: x + norm(f(x))), and RMSNorms of q and k
// over the whole projection (q_norm [heads·head_dim], k_norm [kv_heads·head_dim]) before the head
// split and RoPE; untied embeddings.
#include <string>

#include "attention/error.hpp"
#include "attention/model/checkpoint_config.hpp"
#include "attention/model/families/llama_shaped.hpp"
#include "attention/model/family.hpp"

namespace attn {

namespace {

std::vector<FamilyTensor> olmo2_tensors() {
  using enum Dim;
  const std::string m = "model.layers.{i}.", ours = "layers.{i}.";
  std::vector<FamilyTensor> tensors{{"model.embed_tokens.weight", "embed.weight", {Vocab, DModel}}};
  add_llama_attention(tensors, m + "self_attn.", ours);
  tensors.push_back({m + "self_attn.q_norm.weight", ours + "attn.q_norm.weight", {QWidth}});
  tensors.push_back({m + "self_attn.k_norm.weight", ours + "attn.k_norm.weight", {KvWidth}});
  tensors.push_back({m + "post_attention_layernorm.weight", ours + "ln1_post.weight", {DModel}});
  add_llama_mlp(tensors, m + "mlp.", ours);
  tensors.push_back({m + "post_feedforward_layernorm.weight", ours + "ln2_post.weight", {DModel}});
  tensors.push_back({"model.norm.weight", "ln_f.weight", {DModel}});
  tensors.push_back(
      {"lm_head.weight", "unembed.weight", {Vocab, DModel}, StoredLayout::Unembedding});
  return tensors;
}

ModelConfig olmo2_config(const ConfigJson& config, const FamilyDescription& family) {
  refuse_rope_parameters(config, "rope_theta and rope_scaling");
  ModelConfig m = llama_shaped_sizes(config, family);
  const std::string act = config.string_or("hidden_act", "silu");
  if (act != "silu") {
    throw Error("config.json's hidden_act is '" + act.substr(0, 40) +
                "'; supported: silu (SwiGLU, as every OLMo 2 checkpoint has)");
  }
  if (m.d_model % m.heads != 0 && m.head_dim == 0) {
    throw Error("config.json's hidden_size " + std::to_string(m.d_model) +
                " is not divisible by num_attention_heads " + std::to_string(m.heads) +
                " (and there is no head_dim)");
  }
  m.norm = NormKind::RmsNorm;
  m.norm_eps = config.number_or("rms_norm_eps", 1e-5);
  m.tied = config.boolean_or("tie_word_embeddings", false);
  const bool attention_bias = config.boolean_or("attention_bias", false);
  m.bias = {attention_bias, attention_bias, false};
  BlockConfig block;
  block.mlp = MlpKind::Gated;
  block.activation = Activation::Silu;
  block.norms = NormPlacement::Post;
  block.qk_norm = QkNorm::Whole;
  block.rope.pairing = RopePairing::RotateHalf;
  block.rope.base = config.number_or("rope_theta", 10000.0);
  set_uniform_blocks(m, block);
  validate_checkpoint(m);
  const auto frequencies =
      rope_scaling_frequencies(config, m.head_dim ? m.head_dim : m.d_model / m.heads,
                               block.rope.base, RopeScalingTypes::None);
  for (BlockConfig& each : m.blocks) each.rope.frequencies = frequencies;
  return m;
}

}  // namespace

const FamilyDescription& olmo2_family() {
  static const FamilyDescription olmo2{
      .family = "olmo2",
      .model_type = "olmo2",
      .display_name = "OLMo 2",
      .supported = "supported: OLMo 2 checkpoints (Olmo2ForCausalLM)",
      .name_prefix = "",
      .size_keys = {"num_hidden_layers", "num_attention_heads", "hidden_size",
                    "max_position_embeddings", "", "vocab_size"},
      .tensors = olmo2_tensors(),
      .ignored = {},
      .read_config = olmo2_config,
  };
  return olmo2;
}

}  // namespace attn
