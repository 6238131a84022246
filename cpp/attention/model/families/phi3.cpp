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

// The Llama-shaped metadata keys and Phi-3's window.
std::vector<GgufConfigKey> phi3_gguf_config_keys() {
  std::vector<GgufConfigKey> keys = llama_shaped_gguf_config_keys();
  keys.push_back({"attention.sliding_window", "sliding_window"});
  return keys;
}

// How llama.cpp's converter writes Phi-3 as GGUF (convert_hf_to_gguf.py, Phi3MiniModel): the fused
// qkv_proj as attn_qkv and gate_up_proj as ffn_up, as stored; the sliding window as
// attention.sliding_window (0: none). LongRoPE's factors (rope_factors_long/short) are refused.
FamilyGguf phi3_gguf() {
  const std::string blk = "blk.{i}.", m = "model.layers.{i}.";
  return FamilyGguf{
      .architecture = "phi3",
      .tensors = {{"token_embd.weight", "model.embed_tokens.weight", {}},
                  {blk + "attn_norm.weight", m + "input_layernorm.weight", {}},
                  {blk + "attn_qkv.weight", m + "self_attn.qkv_proj.weight", {}},
                  {blk + "attn_output.weight", m + "self_attn.o_proj.weight", {}},
                  {blk + "ffn_norm.weight", m + "post_attention_layernorm.weight", {}},
                  {blk + "ffn_up.weight", m + "mlp.gate_up_proj.weight", {}},
                  {blk + "ffn_down.weight", m + "mlp.down_proj.weight", {}},
                  {"output_norm.weight", "model.norm.weight", {}},
                  {"output.weight", "lm_head.weight", {}}},
      .config_keys = phi3_gguf_config_keys(),
      .implied_config = "\"hidden_act\": \"silu\"",
  };
}

ModelConfig phi3_config(const ConfigJson& config, const FamilyDescription& family) {
  refuse_rope_parameters(config, "rope_theta, rope_scaling and partial_rotary_factor");
  ModelConfig m = llama_shaped_sizes(config, family);
  BlockConfig block = read_swiglu_rms_norm(m, config, family, 1e-5);
  const std::size_t head_dim = llama_shaped_head_dim(m);
  m.bias = {false, false, false};
  block.window = config.count_or("sliding_window", 0);  // null: every earlier key
  // rotary_ndims = int(head_dim · partial_rotary_factor)
  const double factor = config.number_or("partial_rotary_factor", 1.0);
  const auto rotary = std::size_t(double(head_dim) * factor);
  if (!(factor > 0.0 && factor <= 1.0) || rotary == 0 || rotary % 2 != 0) {
    throw Error("config.json's partial_rotary_factor is " + number_text(factor) +
                "; supported: a fraction up to 1 that turns an even number of each head's " +
                std::to_string(head_dim) + " dimensions");
  }
  block.rope.rotary_dims = rotary == head_dim ? 0 : rotary;
  set_uniform_rope_blocks(m, block, config, rotary, RopeScaling::None,
                          "Phi-3's LongRoPE scaling ('longrope', 'su') is not implemented");
  return m;
}

}  // namespace

const FamilyDescription& phi3_family() {
  static const FamilyDescription phi3 =
      llama_shaped_description("phi3", "Phi-3", "supported: Phi-3 checkpoints (Phi3ForCausalLM)",
                               phi3_tensors(), phi3_config, {}, phi3_gguf());
  return phi3;
}

}  // namespace attn
