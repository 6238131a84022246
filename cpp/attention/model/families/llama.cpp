// The Llama family as checkpoint families (transformers' LlamaForCausalLM, Qwen2ForCausalLM and
// MistralForCausalLM): their config.json keys (LlamaConfig, Qwen2Config, MistralConfig; every
// switch the core does not implement refused by name) and their tensors: nn.Linear weights [out,
// in], q/k/v into in_proj's row blocks, gate/up into the gated MLP's fc, RMSNorm, rotate-half RoPE
// with Llama 3's scaling, grouped-query attention; Qwen2 adds q/k/v biases, Mistral a sliding
// window.
#include <string>
#include <utility>

#include "attention/error.hpp"
#include "attention/message_text.hpp"
#include "attention/model/checkpoint_config.hpp"
#include "attention/model/families/llama_shaped.hpp"
#include "attention/model/family.hpp"

namespace attn {

namespace {

// The keys the three share: sizes, RMSNorm's ε, tied embeddings, SiLU, RoPE's θ and scaling.
// `biases` and `window` are each family's own.
ModelConfig llama_config(const ConfigJson& config, const FamilyDescription& family,
                         LinearBiases biases, std::size_t window) {
  ModelConfig m = llama_shaped_sizes(config, family);
  BlockConfig block = read_swiglu_rms_norm(m, config, family, 1e-6);
  block.window = window;
  m.bias = biases;
  if (config.number_or("partial_rotary_factor", 1.0) != 1.0) {
    throw Error("config.json's partial_rotary_factor is " +
                number_text(config.number_or("partial_rotary_factor", 1.0)) +
                "; supported: 1 (RoPE on every dimension of a head)");
  }
  set_uniform_rope_blocks(m, block, config, llama_shaped_head_dim(m));
  return m;
}

// gguf: how llama.cpp writes the family (empty: not read from GGUF).
FamilyDescription llama_family_description(std::string_view family, std::string_view display,
                                           std::string_view supported, FamilyConfigReader read,
                                           FamilyGguf gguf = {}) {
  // Older conversions keep RoPE's inverse frequencies as a buffer.
  return llama_shaped_description(
      family, display, supported, llama_shaped_tensors(NormPlacement::Pre, QkNorm::None), read,
      {"model.layers.{i}.self_attn.rotary_emb.inv_freq"}, std::move(gguf));
}

}  // namespace

const FamilyDescription& llama_family() {
  static const FamilyDescription llama = llama_family_description(
      "llama", "Llama",
      "supported: Llama-family checkpoints (LlamaForCausalLM: Llama 2 and 3, SmolLM2, TinyLlama)",
      [](const ConfigJson& config, const FamilyDescription& family) {
        const bool attention_bias = config.boolean_or("attention_bias", false);
        return llama_config(config, family,
                            {attention_bias, attention_bias, config.boolean_or("mlp_bias", false)},
                            0);
      },
      // llama.cpp's converter permutes the q/k rows of its "llama" architecture, and writes
      // Llama 3's rope_scaling as rope_freqs.weight.
      [] {
        FamilyGguf gguf = llama_shaped_gguf("llama", true);
        gguf.rope_factors = true;
        return gguf;
      }());
  return llama;
}

const FamilyDescription& qwen2_family() {
  static const FamilyDescription qwen2 = llama_family_description(
      "qwen2", "Qwen2", "supported: Qwen2 and Qwen2.5 checkpoints (Qwen2ForCausalLM)",
      [](const ConfigJson& config, const FamilyDescription& family) {
        if (config.boolean_or("use_sliding_window", false)) {
          throw Error(
              "config.json has use_sliding_window true (Qwen2's sliding window on the layers "
              "from max_window_layers on); supported: false");
        }
        // Qwen2's q/k/v projections always have biases, o_proj and the MLP none.
        return llama_config(config, family, {true, false, false}, 0);
      },
      llama_shaped_gguf("qwen2", false));
  return qwen2;
}

const FamilyDescription& mistral_family() {
  static const FamilyDescription mistral = llama_family_description(
      "mistral", "Mistral", "supported: Mistral checkpoints (MistralForCausalLM)",
      [](const ConfigJson& config, const FamilyDescription& family) {
        return llama_config(config, family, {false, false, false},
                            config.count_or("sliding_window", 0));
      });
  return mistral;
}

}  // namespace attn
