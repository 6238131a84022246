// A checkpoint family as a description the core owns: its config.json reader (the keys that give
// the sizes and switch its architecture, per block), the names, shapes and layouts of its tensors
// (each mapped to a Model parameter) and the tensors it ignores. Each family is one file in
// families/ (gpt2.cpp; llama.cpp: llama, qwen2, mistral; gpt_neox.cpp; qwen3.cpp; gemma.cpp:
// gemma2, gemma3_text; olmo2.cpp; phi3.cpp), registered in families(); the import
// reads a file by its family's description. ARCHITECTURE.md, "How to add a family", lists what a
// new one takes.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

// A size a tensor's shape is written in.
enum class Dim {
  DModel,
  DModel3,  // 3·d_model (GPT-2's fused q|k|v)
  DModel4,  // 4·d_model (GPT-2's MLP)
  Vocab,
  Context,
  QWidth,     // heads·head_dim (the queries', and o_proj's input)
  KvWidth,    // kv_heads·head_dim (the keys' and the values')
  QkvWidth,   // (heads + 2·kv_heads)·head_dim (a fused q|k|v: Phi-3's qkv_proj)
  HeadDim,    // head_dim (a per-head q/k norm)
  MlpWidth,   // intermediate_size
  MlpWidth2,  // 2·intermediate_size (a fused gate|up: Phi-3's gate_up_proj)
};

// The sizes a shape's Dims stand for.
struct FamilySizes {
  std::size_t d_model = 0, vocab = 0, context = 0, q_width = 0, kv_width = 0, mlp_width = 0;
  std::size_t head_dim = 0;
};

// Which rows of our parameter a stored tensor fills: all of them, or one block of a fused one
// (q_proj, k_proj and v_proj fill in_proj's query, key and value rows; gate_proj and up_proj
// fill SwiGLU's fc rows).
enum class RowBlock { Whole, Query, Key, Value, Gate, Up };

// How a tensor is stored against our parameter's [out, in] layout.
enum class StoredLayout {
  AsIs,        // the same values in the same order
  Transposed,  // [in, out] (GPT-2's Conv1D)
  TiedCopy,    // a copy of another tensor (an untied-looking lm_head that must equal the embedding)
  Unembedding,  // lm_head: our unembed.weight when the config is untied, else a TiedCopy
  // A fused q|k|v weight [3·d, in] (or bias [3·d]) whose rows are grouped per head, [heads, 3,
  // head_dim] (GPT-NeoX's query_key_value), read into our [q | k | v] row blocks.
  PerHeadQkv,
  // A q or k projection (weight or bias) whose rows llama.cpp's converter permuted for its RoPE
  // (convert_hf_to_gguf.py, LlamaModel.permute): within each head, stored row 2·j + s holds row
  // s·head_dim/2 + j of the original (s 0 or 1, j < head_dim/2); read back into the original order.
  RopeInterleaved,
  // A Gemma RMSNorm weight that llama.cpp's converter wrote with 1 added (Gemma2Model and
  // Gemma3Model store 1 + w, the plain RMSNorm weight its graph multiplies by): read back as
  // stored − 1 in float32, which our (1 + w) RMSNorm turns into the stored value again, exactly
  // (Sterbenz: stored − 1 is exact for stored in [0.5, 2], and 1 + (stored − 1) = stored).
  PlusOne,
};

// One tensor of the family. Names may hold "{i}", a layer index.
struct FamilyTensor {
  std::string stored;      // e.g. "h.{i}.attn.c_attn.weight"
  std::string ours;        // e.g. "layers.{i}.attn.in_proj_weight"
  std::vector<Dim> shape;  // as stored
  StoredLayout layout = StoredLayout::AsIs;
  RowBlock rows = RowBlock::Whole;
};

// config.json's keys for the sizes (a second name for the context, e.g. n_ctx, when older files
// use it).
struct FamilySizeKeys {
  std::string_view layers, heads, d_model, context, context_alias, vocab;
};

// How a GGUF file (llama.cpp's converter) stores one of the family's tensors: its GGUF name (with
// "{i}"), the family's stored name it holds the values of, and its layout when it is not the
// stored one (GPT-2's Conv1D weights are written [out, in]: AsIs; llama's q/k rows permuted:
// RopeInterleaved).
struct GgufTensorName {
  std::string gguf;    // e.g. "blk.{i}.attn_q.weight"
  std::string stored;  // e.g. "model.layers.{i}.self_attn.q_proj.weight"
  std::optional<StoredLayout> layout;
};

namespace gguf {
class Metadata;
}

// A GGUF metadata key (after "<architecture>.") and the config.json key its value stands for
// (a number, or a bool: true / false).
struct GgufConfigKey {
  std::string_view gguf;    // e.g. "attention.head_count_kv"
  std::string_view config;  // e.g. "num_key_value_heads"
  bool required = false;    // a file without it is refused, naming the GGUF key
};

// config.json members a family computes from a GGUF file's metadata (keys after `prefix`,
// "<architecture>."), as JSON members (", "-separated, no braces; "" for none): what llama.cpp
// derives rather than stores (GPT-NeoX's rotary_pct from rope.dimension_count, Gemma's
// query_pre_attn_scalar from its model size). Throws attn::Error naming a key it needs.
using GgufDerivedConfig = std::string (*)(const gguf::Metadata& metadata,
                                          const std::string& prefix);

// A family as llama.cpp's GGUF files store it (gguf_checkpoint.hpp reads it): general.architecture,
// the tensors' GGUF names, the metadata keys that stand for config.json's, and config.json keys
// whose value GGUF implies (e.g. "hidden_act": "silu"). An empty architecture: not read from GGUF.
struct FamilyGguf {
  std::string_view architecture;
  std::vector<GgufTensorName> tensors;
  std::vector<GgufConfigKey> config_keys;
  std::string_view implied_config;  // JSON members, e.g. "\"hidden_act\": \"silu\""
  GgufDerivedConfig derived_config = nullptr;
  // rope_freqs.weight read (Llama 3's rope_scaling as the converter stores it: F32 [rotated / 2],
  // one factor per rotated pair, θ_i divided by it); false: a file with it is refused.
  bool rope_factors = false;
  // rope.scaling.type 'linear' (with rope.scaling.factor) read as config.json's linear
  // rope_scaling (Gemma 3's full layers); false: only 'none'.
  bool linear_rope_scaling = false;
};

class ConfigJson;
struct ModelConfig;
struct FamilyDescription;
// A family's config.json reader: the ModelConfig (checkpoint set) it describes, every switch the
// core does not implement refused by name.
using FamilyConfigReader = ModelConfig (*)(const ConfigJson& config,
                                           const FamilyDescription& family);

struct FamilyDescription {
  std::string_view family;        // our name, e.g. "gpt2"
  std::string_view model_type;    // config.json's model_type
  std::string_view display_name;  // in messages, e.g. "GPT-2"
  std::string_view supported;     // what the import names as supported in its refusals
  std::string_view name_prefix;   // a prefix some files put before every name ("transformer.")
  FamilySizeKeys size_keys;
  std::vector<FamilyTensor> tensors;
  std::vector<std::string_view> ignored;  // buffers that are not parameters, e.g. causal masks
  FamilyConfigReader read_config = nullptr;
  FamilyGguf gguf;  // how llama.cpp's GGUF files store it (empty architecture: not read)
};

// The families (each defined in its file in families/): GPT-2 (gpt2, distilgpt2 and other
// GPT2LMHeadModel checkpoints); the Llama family: llama (Llama 2/3, SmolLM2, TinyLlama), qwen2
// (q/k/v biases), mistral (a sliding window); gpt_neox (Pythia: per-head fused q|k|v, partial
// rotary, parallel residual); qwen3 (per-head q/k norms); gemma2 (soft-caps, local and global
// layers) and gemma3_text (q/k norms, two RoPE bases); olmo2 (norms after each sublayer, q/k
// norms over the whole projection); phi3 (fused qkv_proj and gate_up_proj).
const FamilyDescription& gpt2_family();
const FamilyDescription& llama_family();
const FamilyDescription& qwen2_family();
const FamilyDescription& mistral_family();
const FamilyDescription& gpt_neox_family();
const FamilyDescription& qwen3_family();
const FamilyDescription& gemma2_family();
const FamilyDescription& gemma3_text_family();
const FamilyDescription& olmo2_family();
const FamilyDescription& phi3_family();
// Every family, in the order the core lists them (the registry: one line per family), and the one
// whose model_type (config.json) is `model_type`, or nullptr.
std::span<const FamilyDescription* const> families();
const FamilyDescription* family_of_model_type(std::string_view model_type);

// A stored name (its prefix stripped) matched against the family's tensors.
struct FamilyMatch {
  const FamilyTensor* tensor = nullptr;
  std::optional<std::size_t> layer;  // the "{i}", when the name has one
  std::string ours;                  // our parameter's name, the layer filled in
};
std::optional<FamilyMatch> match_tensor(const FamilyDescription& family, std::string_view name);
// True for a name the family ignores (prefix stripped).
bool is_ignored(const FamilyDescription& family, std::string_view name);
// The layer of a name with "{i}" in any of the family's patterns ("h.3.…" → 3), if it has one.
std::optional<std::size_t> layer_of(const FamilyDescription& family, std::string_view name);
// The family's stored name for one of our parameters' rows (for a message about a missing
// tensor).
std::string stored_name(const FamilyDescription& family, std::string_view ours,
                        RowBlock rows = RowBlock::Whole);

// A shape in numbers.
std::vector<std::size_t> shape_of(const std::vector<Dim>& shape, const FamilySizes& sizes);

}  // namespace attn
