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

ModelConfig olmo2_config(const ConfigJson& config, const FamilyDescription& family) {
  refuse_rope_parameters(config, "rope_theta and rope_scaling");
  ModelConfig m = llama_shaped_sizes(config, family);
  BlockConfig block = read_swiglu_rms_norm(m, config, family, 1e-5);
  const std::size_t head_dim = llama_shaped_head_dim(m);
  const bool attention_bias = config.boolean_or("attention_bias", false);
  m.bias = {attention_bias, attention_bias, false};
  block.norms = NormPlacement::Post;
  block.qk_norm = QkNorm::Whole;
  set_uniform_rope_blocks(m, block, config, head_dim, RopeScaling::None);
  return m;
}

}  // namespace

const FamilyDescription& olmo2_family() {
  static const FamilyDescription olmo2 = llama_shaped_description(
      "olmo2", "OLMo 2", "supported: OLMo 2 checkpoints (Olmo2ForCausalLM)",
      llama_shaped_tensors(NormPlacement::Post, QkNorm::Whole), olmo2_config);
  return olmo2;
}

}  // namespace attn
