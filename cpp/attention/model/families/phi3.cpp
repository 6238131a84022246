// Phi-3 (transformers' Phi3ForCausalLM: Phi-3-mini-4k) as a checkpoint family: its config.json
// keys (Phi3Config; every switch the core does not implement refused by name, LongRoPE's
// rope_scaling among them) and its tensors: the fused qkv_proj (rows [q | k | v], our in_proj as
// stored) and gate_up_proj (rows [gate | up], our gated fc as stored), RMSNorm, SwiGLU, a sliding
// window on every layer (as the causal mask applies config.sliding_window), rotate-half RoPE on
// each head's first partial_rotary_factor of dimensions, untied embeddings.
#include <string>

#include "attention/error.hpp"
#include "attention/message_text.hpp"
#include "attention/model/checkpoint_config.hpp"
#include "attention/model/families/llama_shaped.hpp"
#include "attention/model/family.hpp"

namespace attn {

namespace {

std::vector<FamilyTensor> phi3_tensors() {
  using enum Dim;
  const std::string m = "model.layers.{i}.", ours = "layers.{i}.";
  return {
      {"model.embed_tokens.weight", "embed.weight", {Vocab, DModel}},
      {m + "input_layernorm.weight", ours + "ln1.weight", {DModel}},
      {m + "self_attn.qkv_proj.weight", ours + "attn.in_proj_weight", {QkvWidth, DModel}},
      {m + "self_attn.o_proj.weight", ours + "attn.out_proj.weight", {DModel, QWidth}},
      {m + "post_attention_layernorm.weight", ours + "ln2.weight", {DModel}},
      {m + "mlp.gate_up_proj.weight", ours + "mlp.fc.weight", {MlpWidth2, DModel}},
      {m + "mlp.down_proj.weight", ours + "mlp.proj.weight", {DModel, MlpWidth}},
      {"model.norm.weight", "ln_f.weight", {DModel}},
      {"lm_head.weight", "unembed.weight", {Vocab, DModel}, StoredLayout::Unembedding},
  };
}

ModelConfig phi3_config(const ConfigJson& config, const FamilyDescription& family) {
  refuse_rope_parameters(config, "rope_theta, rope_scaling and partial_rotary_factor");
  ModelConfig m = llama_shaped_sizes(config, family);
  const std::string act = config.string_or("hidden_act", "silu");
  if (act != "silu") {
    throw Error("config.json's hidden_act is '" + act.substr(0, 40) +
                "'; supported: silu (SwiGLU, as every Phi-3 checkpoint has)");
  }
  if (m.d_model % m.heads != 0 && m.head_dim == 0) {
    throw Error("config.json's hidden_size " + std::to_string(m.d_model) +
                " is not divisible by num_attention_heads " + std::to_string(m.heads) +
                " (and there is no head_dim)");
  }
  const std::size_t head_dim = m.head_dim ? m.head_dim : m.d_model / m.heads;
  m.norm = NormKind::RmsNorm;
  m.norm_eps = config.number_or("rms_norm_eps", 1e-5);
  m.tied = config.boolean_or("tie_word_embeddings", false);
  m.bias = {false, false, false};
  BlockConfig block;
  block.mlp = MlpKind::Gated;
  block.activation = Activation::Silu;
  block.window = config.count_or("sliding_window", 0);  // null: every earlier key
  block.rope.pairing = RopePairing::RotateHalf;
  block.rope.base = config.number_or("rope_theta", 10000.0);
  // rotary_ndims = int(head_dim · partial_rotary_factor)
  const double factor = config.number_or("partial_rotary_factor", 1.0);
  const auto rotary = std::size_t(double(head_dim) * factor);
  if (!(factor > 0.0 && factor <= 1.0) || rotary == 0 || rotary % 2 != 0) {
    throw Error("config.json's partial_rotary_factor is " + number_text(factor) +
                "; supported: a fraction up to 1 that turns an even number of each head's " +
                std::to_string(head_dim) + " dimensions");
  }
  block.rope.rotary_dims = rotary == head_dim ? 0 : rotary;
  set_uniform_blocks(m, block);
  validate_checkpoint(m);
  const auto frequencies =
      rope_scaling_frequencies(config, rotary, block.rope.base, RopeScalingTypes::None,
                               "Phi-3's LongRoPE scaling ('longrope', 'su') is not implemented");
  for (BlockConfig& each : m.blocks) each.rope.frequencies = frequencies;
  return m;
}

}  // namespace

const FamilyDescription& phi3_family() {
  static const FamilyDescription phi3{
      .family = "phi3",
      .model_type = "phi3",
      .display_name = "Phi-3",
      .supported = "supported: Phi-3 checkpoints (Phi3ForCausalLM)",
      .name_prefix = "",
      .size_keys = {"num_hidden_layers", "num_attention_heads", "hidden_size",
                    "max_position_embeddings", "", "vocab_size"},
      .tensors = phi3_tensors(),
      .ignored = {},
      .read_config = phi3_config,
  };
  return phi3;
}

}  // namespace attn
