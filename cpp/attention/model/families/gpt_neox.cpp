// GPT-NeoX (transformers' GPTNeoXForCausalLM: EleutherAI's Pythia suite) as a checkpoint family:
// its config.json keys (GPTNeoXConfig, the old rotary_pct / rotary_emb_base and the newer
// partial_rotary_factor / rope_theta; every switch the core does not implement refused by name)
// and its tensors: the fused query_key_value grouped per head ([heads, 3, head_dim] rows, read
// into our q | k | v blocks), rotate-half RoPE on each head's first rotary_pct of dimensions,
// LayerNorm with biases, an exact-GELU MLP, untied embed_in / embed_out, and the attention's
// parallel (x + attn(ln1 x) + mlp(ln2 x)) or sequential residual. Older files' buffers (the causal
// mask attention.bias, U8 or BOOL; masked_bias; rotary_emb.inv_freq) are ignored.
#include <cmath>
#include <cstdio>
#include <string>

#include "attention/error.hpp"
#include "attention/io/gguf.hpp"
#include "attention/message_text.hpp"
#include "attention/model/checkpoint_config.hpp"
#include "attention/model/families/llama_shaped.hpp"
#include "attention/model/family.hpp"
#include "attention/ops/layernorm.hpp"

namespace attn {

namespace {

std::vector<FamilyTensor> gpt_neox_tensors() {
  using enum Dim;
  const std::string m = "gpt_neox.layers.{i}.", ours = "layers.{i}.";
  std::vector<FamilyTensor> tensors{{"gpt_neox.embed_in.weight", "embed.weight", {Vocab, DModel}}};
  const auto norm = [&](const std::string& stored, const std::string& name) {
    for (const char* part : {".weight", ".bias"})
      tensors.push_back({stored + part, name + part, {DModel}});
  };
  norm(m + "input_layernorm", ours + "ln1");
  tensors.push_back({m + "attention.query_key_value.weight",
                     ours + "attn.in_proj_weight",
                     {QkvWidth, DModel},
                     StoredLayout::PerHeadQkv});
  tensors.push_back({m + "attention.query_key_value.bias",
                     ours + "attn.in_proj_bias",
                     {QkvWidth},
                     StoredLayout::PerHeadQkv});
  tensors.push_back(
      {m + "attention.dense.weight", ours + "attn.out_proj.weight", {DModel, QWidth}});
  tensors.push_back({m + "attention.dense.bias", ours + "attn.out_proj.bias", {DModel}});
  norm(m + "post_attention_layernorm", ours + "ln2");
  tensors.push_back({m + "mlp.dense_h_to_4h.weight", ours + "mlp.fc.weight", {MlpWidth, DModel}});
  tensors.push_back({m + "mlp.dense_h_to_4h.bias", ours + "mlp.fc.bias", {MlpWidth}});
  tensors.push_back({m + "mlp.dense_4h_to_h.weight", ours + "mlp.proj.weight", {DModel, MlpWidth}});
  tensors.push_back({m + "mlp.dense_4h_to_h.bias", ours + "mlp.proj.bias", {DModel}});
  norm("gpt_neox.final_layer_norm", "ln_f");
  tensors.push_back(
      {"embed_out.weight", "unembed.weight", {Vocab, DModel}, StoredLayout::Unembedding});
  return tensors;
}

// rotary_pct from a GGUF file's rope.dimension_count (the rotated dimensions of each head of
// embedding_length / attention.head_count; absent: every one, as llama.cpp defaults n_rot).
std::string gpt_neox_gguf_config(const gguf::Metadata& metadata, const std::string& prefix) {
  const std::string dims = prefix + "rope.dimension_count";
  if (!metadata.contains(dims)) return "\"rotary_pct\": 1";
  const double head_dim = double(metadata.integer(prefix + "embedding_length")) /
                          double(metadata.integer(prefix + "attention.head_count"));
  char text[48];
  std::snprintf(text, sizeof text, "\"rotary_pct\": %.17g",
                double(metadata.integer(dims)) / head_dim);
  return text;
}

// How llama.cpp's converter writes GPT-NeoX as GGUF (convert_hf_to_gguf.py, GPTNeoXModel): the
// fused query_key_value regrouped from per-head [heads, 3, head_dim] rows to [q | k | v] (our
// in_proj's order: AsIs, as its graph views it), rotary_pct as rope.dimension_count, the
// residual's form as use_parallel_residual, the LayerNorms' ε; no rope.freq_base (llama.cpp's
// default is 10000, Pythia's) and no activation: Pythia's exact GELU is implied (llama.cpp's
// graph computes ggml_gelu's tanh form; the numbers read here are the original model's).
FamilyGguf gpt_neox_gguf() {
  const std::string blk = "blk.{i}.", m = "gpt_neox.layers.{i}.";
  std::vector<GgufTensorName> tensors{{"token_embd.weight", "gpt_neox.embed_in.weight", {}}};
  const std::pair<const char*, const char*> parts[] = {
      {"attn_norm", "input_layernorm"},   {"attn_qkv", "attention.query_key_value"},
      {"attn_output", "attention.dense"}, {"ffn_norm", "post_attention_layernorm"},
      {"ffn_up", "mlp.dense_h_to_4h"},    {"ffn_down", "mlp.dense_4h_to_h"}};
  for (const auto& [gguf, stored] : parts) {
    const bool qkv = std::string_view(gguf) == "attn_qkv";
    for (const char* part : {".weight", ".bias"}) {
      tensors.push_back({blk + gguf + part, m + stored + part,
                         qkv ? std::optional(StoredLayout::AsIs) : std::nullopt});
    }
  }
  tensors.push_back({"output_norm.weight", "gpt_neox.final_layer_norm.weight", {}});
  tensors.push_back({"output_norm.bias", "gpt_neox.final_layer_norm.bias", {}});
  tensors.push_back({"output.weight", "embed_out.weight", {}});
  return FamilyGguf{
      .architecture = "gptneox",
      .tensors = std::move(tensors),
      .config_keys = {{"block_count", "num_hidden_layers", true},
                      {"context_length", "max_position_embeddings", true},
                      {"embedding_length", "hidden_size", true},
                      {"feed_forward_length", "intermediate_size", true},
                      {"attention.head_count", "num_attention_heads", true},
                      {"attention.layer_norm_epsilon", "layer_norm_eps"},
                      {"use_parallel_residual", "use_parallel_residual"},
                      {"rope.freq_base", "rope_theta"}},
      .implied_config = "\"hidden_act\": \"gelu\"",
      .derived_config = gpt_neox_gguf_config,
  };
}

// A number config.json may give under an old key (Pythia's files) or its newer name (transformers
// >= 4.45 writes both, equal): the old one, else the new one, else the default; two that
// disagree are refused, naming both.
double either_number(const ConfigJson& config, const char* old_key, const char* new_key,
                     double fallback) {
  if (config.has(old_key) && config.has(new_key) &&
      config.number_or(old_key, 0) != config.number_or(new_key, 0)) {
    throw Error("config.json has " + std::string(old_key) + " " +
                number_text(config.number_or(old_key, 0)) + " but " + new_key + " " +
                number_text(config.number_or(new_key, 0)) + "; they name the same setting");
  }
  return config.number_or(old_key, config.number_or(new_key, fallback));
}

ModelConfig gpt_neox_config(const ConfigJson& config, const FamilyDescription& family) {
  refuse_rope_parameters(config,
                         "rotary_pct (or partial_rotary_factor) and rotary_emb_base (or "
                         "rope_theta)");
  ModelConfig m = llama_shaped_sizes(config, family);
  if (config.has("num_key_value_heads") && m.kv_heads != m.heads) {
    throw Error("config.json's num_key_value_heads is " + std::to_string(m.kv_heads) +
                "; GPT-NeoX's fused query_key_value has one key/value head per query head");
  }
  if (config.has("head_dim")) {
    throw Error(
        "config.json has head_dim; GPT-NeoX's heads are hidden_size / "
        "num_attention_heads wide");
  }
  m.kv_heads = m.heads;
  if (m.d_model % m.heads != 0) {
    throw Error("config.json's hidden_size " + std::to_string(m.d_model) +
                " is not divisible by num_attention_heads " + std::to_string(m.heads));
  }
  const std::size_t head_dim = m.d_model / m.heads;
  m.norm = NormKind::LayerNorm;
  const double eps = config.number_or("layer_norm_eps", 1e-5);
  if (!(std::abs(eps - kLayerNormEps) <= 1e-12)) {
    throw Error("config.json's layer_norm_eps is " + number_text(eps) +
                "; supported: 1e-05 (Pythia's)");
  }
  const std::string act = config.string_or("hidden_act", "gelu");
  BlockConfig block;
  block.mlp = MlpKind::Plain;
  if (act == "gelu") {
    block.activation = Activation::GeluErf;
  } else if (act == "gelu_new" || act == "gelu_pytorch_tanh") {
    block.activation = Activation::GeluTanh;
  } else {
    throw Error("config.json's hidden_act is '" + act.substr(0, 40) +
                "'; supported: gelu (erf, Pythia's), gelu_new and gelu_pytorch_tanh (tanh)");
  }
  const bool attention_bias = config.boolean_or("attention_bias", true);
  m.bias = {attention_bias, attention_bias, true};
  m.tied = config.boolean_or("tie_word_embeddings", false);
  block.parallel_residual = config.boolean_or("use_parallel_residual", true);
  // rotary_ndims = int(head_size · rotary_pct): the first rotary_ndims of each head turn.
  const double rotary_pct = either_number(config, "rotary_pct", "partial_rotary_factor", 0.25);
  if (!(rotary_pct > 0.0 && rotary_pct <= 1.0)) {
    throw Error("config.json's rotary_pct is " + number_text(rotary_pct) +
                "; supported: above 0, up to 1 (the fraction of each head RoPE turns)");
  }
  const auto rotary = std::size_t(double(head_dim) * rotary_pct);
  if (rotary == 0 || rotary % 2 != 0) {
    throw Error("config.json's rotary_pct " + number_text(rotary_pct) + " turns " +
                std::to_string(rotary) + " of each head's " + std::to_string(head_dim) +
                " dimensions; RoPE turns pairs: supported is an even number above 0");
  }
  block.rope.pairing = RopePairing::RotateHalf;
  block.rope.base = either_number(config, "rotary_emb_base", "rope_theta", 10000.0);
  block.rope.rotary_dims = rotary == head_dim ? 0 : rotary;
  set_uniform_rope_blocks(m, block, config, rotary, RopeScaling::None,
                          "GPT-NeoX's linear and dynamic scaling are not implemented");
  return m;
}

}  // namespace

const FamilyDescription& gpt_neox_family() {
  static const FamilyDescription gpt_neox = llama_shaped_description(
      "gpt_neox", "GPT-NeoX",
      "supported: GPT-NeoX checkpoints (GPTNeoXForCausalLM: the Pythia suite)", gpt_neox_tensors(),
      gpt_neox_config,
      {"gpt_neox.layers.{i}.attention.bias", "gpt_neox.layers.{i}.attention.masked_bias",
       "gpt_neox.layers.{i}.attention.rotary_emb.inv_freq"},
      gpt_neox_gguf());
  return gpt_neox;
}

}  // namespace attn
