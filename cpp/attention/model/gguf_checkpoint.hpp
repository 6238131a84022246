// GGUF checkpoints (llama.cpp's files) as the import reads them: the family a file's
// general.architecture names, the config.json its metadata stands for (read by the family's own
// reader, so the same limits and refusals apply), and the family's tensors under their GGUF names
// (the view the import matches a GGUF file's tensors by). Each family says how GGUF stores it
// (FamilyDescription::gguf, beside its safetensors names).
#pragma once

#include <string>
#include <string_view>

#include "attention/model/checkpoint_config.hpp"
#include "attention/model/checkpoint_files.hpp"
#include "attention/model/family.hpp"

namespace attn {

// The GGUF tensor of Llama 3's RoPE scaling (llama.cpp's converter, LlamaModel's
// generate_extra_tensors): F32 [rotated / 2], each pair's θ divided by its factor (ggml_rope_ext's
// freq_factors), read by the families whose FamilyGguf::rope_factors is set.
inline constexpr std::string_view kRopeFactorsTensor = "rope_freqs.weight";

// The family whose GGUF architecture is `architecture`, or nullptr.
const FamilyDescription* family_of_gguf_architecture(std::string_view architecture);
// "gpt2, llama, qwen2, gptneox, qwen3, gemma2, gemma3, phi3": the architectures read from GGUF
// (the registry's order), for messages.
std::string gguf_architecture_names();

// The config.json a GGUF file stands for, as text: the family's metadata keys
// ("<architecture>.block_count" → num_hidden_layers, …), the keys GGUF implies (hidden_act),
// vocab_size from token_embd.weight, tie_word_embeddings from output.weight's absence,
// attention_bias and mlp_bias from layer 0's biases, the family's derived keys, a linear
// rope.scaling.type as rope_scaling where the family reads it. Throws attn::Error for an
// architecture not read (naming the ones that are), a required key missing or not a number, RoPE
// scaling the family does not read (another rope.scaling.type, rope_freqs.weight outside llama,
// Phi-3's rope_factors_long/short), a vision tower's tensors (v.*, mm.*).
std::string gguf_config_json(const CheckpointFile& file);

// The family and model of a GGUF file (gguf_config_json read by the family's reader, its messages
// said as the GGUF metadata's), with tokenizer.ggml.eos_token_id as the end-of-text id.
CheckpointConfig gguf_checkpoint_config(const CheckpointFile& file);

// `family` with its tensors named as GGUF stores them (family.gguf.tensors): shapes and layouts as
// the GGUF file holds them (a Conv1D weight written [out, in] is AsIs, llama's q/k rows
// RopeInterleaved), no prefix, nothing ignored; a family tensor GGUF does not store is left out.
FamilyDescription gguf_view(const FamilyDescription& family);

}  // namespace attn
