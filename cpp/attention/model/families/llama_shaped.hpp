// What the Llama-shaped families share (llama.cpp's llama, qwen2, mistral; qwen3.cpp, gemma.cpp,
// olmo2.cpp, phi3.cpp): config.json's size keys (hidden_size, num_hidden_layers, …) and the
// tensor names of transformers' LlamaAttention and LlamaMLP (q/k/v/o_proj, gate/up/down_proj).
// Defined in llama.cpp.
#pragma once

#include <cstddef>
#include <string>
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

// Refuses a config.json in transformers 5's layout (rope_parameters), which the families' readers
// do not read, naming the keys they read instead.
void refuse_rope_parameters(const ConfigJson& config, const char* read_instead);

// The tensors of transformers' Llama attention under `stored` ("model.layers.{i}.self_attn."):
// q_proj, k_proj, v_proj (weights and biases) into our in_proj's row blocks, o_proj into
// out_proj (`ours`: "layers.{i}.").
void add_llama_attention(std::vector<FamilyTensor>& tensors, const std::string& stored,
                         const std::string& ours);
// The tensors of its gated MLP under `stored` ("model.layers.{i}.mlp."): gate_proj and up_proj
// (weights, then biases) into the gated fc's row blocks, down_proj into proj.
void add_llama_mlp(std::vector<FamilyTensor>& tensors, const std::string& stored,
                   const std::string& ours);

}  // namespace attn
