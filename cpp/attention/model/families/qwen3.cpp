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

ModelConfig qwen3_config(const ConfigJson& config, const FamilyDescription& family) {
  refuse_rope_parameters(config, "rope_theta and rope_scaling");
  // Qwen3Config's head_dim defaults to 128 whatever hidden_size / num_attention_heads is.
  ModelConfig m = llama_shaped_sizes(config, family, {.kv_heads = 0, .head_dim = 128});
  BlockConfig block = read_swiglu_rms_norm(m, config, family, 1e-6);
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
  const bool attention_bias = config.boolean_or("attention_bias", false);
  m.bias = {attention_bias, attention_bias, false};
  block.qk_norm = QkNorm::PerHead;
  set_uniform_rope_blocks(m, block, config, m.head_dim, RopeScaling::None,
                          "Qwen3's long-context scaling (yarn) is not implemented");
  return m;
}

}  // namespace

const FamilyDescription& qwen3_family() {
  static const FamilyDescription qwen3 =
      llama_shaped_description("qwen3", "Qwen3", "supported: Qwen3 checkpoints (Qwen3ForCausalLM)",
                               llama_shaped_tensors(NormPlacement::Pre, QkNorm::PerHead),
                               qwen3_config, {}, llama_shaped_gguf("qwen3", false));
  return qwen3;
}

}  // namespace attn
