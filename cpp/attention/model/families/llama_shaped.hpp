// What the Llama-shaped families share (llama.cpp's llama, qwen2, mistral; qwen3.cpp, gemma.cpp,
// olmo2.cpp, phi3.cpp; gpt_neox.cpp reads the same size keys): config.json's size keys
// (hidden_size, num_hidden_layers, …), the SwiGLU block and RMSNorm most of them read alike, the
// tensor names of transformers' LlamaAttention and LlamaMLP (q/k/v/o_proj, gate/up/down_proj) with
// the norms around them, and the description such a family registers. Defined in
// llama_shaped.cpp.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "attention/model/checkpoint_config.hpp"
#include "attention/model/family.hpp"

namespace attn {

// The defaults a family's config class gives the keys a config.json may leave out.
struct LlamaShapedDefaults {
  std::size_t kv_heads = 0;  // num_key_value_heads: 0 for num_attention_heads
  std::size_t head_dim = 0;  // head_dim: 0 for hidden_size / num_attention_heads
};

// config.json's sizes (hidden_size, num_hidden_layers, num_attention_heads, intermediate_size,
// vocab_size, max_position_embeddings required; num_key_value_heads and head_dim as `defaults`
// say), each checked positive, as a checkpoint's ModelConfig with RoPE; every other field is
// the family's to set.
ModelConfig llama_shaped_sizes(const ConfigJson& config, const FamilyDescription& family,
                               const LlamaShapedDefaults& defaults = {});

// A head's width: config.json's head_dim when it gives one, else hidden_size /
// num_attention_heads (a hidden_size that does not divide refused).
std::size_t llama_shaped_head_dim(const ModelConfig& m);

// Refuses a config.json in transformers 5's layout (rope_parameters), which the families' readers
// do not read, naming the keys they read instead.
void refuse_rope_parameters(const ConfigJson& config, const char* read_instead);

// What the SwiGLU families (llama, qwen2, mistral, qwen3, olmo2, phi3) read alike into `m`:
// hidden_act silu (anything else refused, naming the family), RMSNorm with rms_norm_eps
// (`default_eps` when absent), tie_word_embeddings (false when absent); and their block: the gated
// SiLU MLP and rotate-half RoPE turning by rope_theta (10 000 when absent). The rest of the block
// is the family's to set.
BlockConfig read_swiglu_rms_norm(ModelConfig& m, const ConfigJson& config,
                                 const FamilyDescription& family, double default_eps);

// The tensors of transformers' Llama attention under `stored` ("model.layers.{i}.self_attn."):
// q_proj, k_proj, v_proj (weights and biases) into our in_proj's row blocks, o_proj into
// out_proj (`ours`: "layers.{i}.").
void add_llama_attention(std::vector<FamilyTensor>& tensors, const std::string& stored,
                         const std::string& ours);
// The tensors of its gated MLP under `stored` ("model.layers.{i}.mlp."): gate_proj and up_proj
// (weights, then biases) into the gated fc's row blocks, down_proj into proj.
void add_llama_mlp(std::vector<FamilyTensor>& tensors, const std::string& stored,
                   const std::string& ours);

// A Llama-shaped family's tensors, its layers told apart by their norms: embed_tokens; per layer
// the RMSNorms `norms` places around the attention and the MLP (input_layernorm → ln1,
// post_attention_layernorm → ln2 before the MLP or ln1_post after the attention,
// pre_feedforward_layernorm → ln2, post_feedforward_layernorm → ln2_post), Llama's attention, its
// q_norm and k_norm as `qk_norm` says ([head_dim] per head, or over the whole projection), Llama's
// MLP; model.norm and lm_head.
std::vector<FamilyTensor> llama_shaped_tensors(NormPlacement norms, QkNorm qk_norm);

// How llama.cpp's converter writes a family with pre-norms (Llama, Qwen2, Qwen3) as GGUF
// `architecture`: token_embd, blk.{i}.attn_norm, attn_q/k/v/output (weights and biases),
// attn_q_norm and attn_k_norm, ffn_norm, ffn_gate/up/down, output_norm and output; the q/k rows
// permuted (RopeInterleaved) when `permuted_qk` (llama: LlamaModel.permute); the metadata keys of
// LlamaConfig's sizes, RMSNorm's ε and RoPE's θ.
FamilyGguf llama_shaped_gguf(std::string_view architecture, bool permuted_qk);
// The GGUF metadata keys a Llama-shaped config.json is read from (llama.cpp's `{arch}.` names
// without the prefix → config.json's keys; true: required).
std::vector<GgufConfigKey> llama_shaped_gguf_config_keys();

// The description of a family whose config.json names its sizes as LlamaConfig does: our name and
// model_type both `model_type`, no prefix before the tensors' names.
FamilyDescription llama_shaped_description(std::string_view model_type, std::string_view display,
                                           std::string_view supported,
                                           std::vector<FamilyTensor> tensors,
                                           FamilyConfigReader read,
                                           std::vector<std::string_view> ignored = {},
                                           FamilyGguf gguf = {});

}  // namespace attn
