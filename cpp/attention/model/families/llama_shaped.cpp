// What the Llama-shaped families share (llama_shaped.hpp): their size keys, SwiGLU block, RMSNorm,
// tensor names and description.
#include "attention/model/families/llama_shaped.hpp"

#include <string>
#include <utility>

#include "attention/error.hpp"

namespace attn {

ModelConfig llama_shaped_sizes(const ConfigJson& config, const FamilyDescription& family,
                               const LlamaShapedDefaults& defaults) {
  const FamilySizeKeys& keys = family.size_keys;
  const auto required = [&](std::string_view key) {
    return config.count(key, "config.json has no " + std::string(key) + "; a " +
                                 std::string(family.display_name) +
                                 " config.json has hidden_size, num_hidden_layers, "
                                 "num_attention_heads, intermediate_size, vocab_size and "
                                 "max_position_embeddings");
  };
  ModelConfig m;
  m.checkpoint = true;
  m.seed = 0;  // nothing is drawn: every parameter comes from the file
  m.d_model = required(keys.d_model);
  m.layers = required(keys.layers);
  m.heads = required(keys.heads);
  m.mlp_width = required("intermediate_size");
  m.vocab = required(keys.vocab);
  m.context = required(keys.context);
  m.kv_heads =
      config.count_or("num_key_value_heads", defaults.kv_heads ? defaults.kv_heads : m.heads);
  m.head_dim = config.count_or("head_dim", defaults.head_dim);
  const auto positive = [&](const char* key, std::size_t value) {
    if (value == 0) throw Error("config.json needs a positive " + std::string(key) + ", got 0");
  };
  positive("hidden_size", m.d_model);
  positive("num_hidden_layers", m.layers);
  positive("num_attention_heads", m.heads);
  positive("num_key_value_heads", m.kv_heads);
  positive("intermediate_size", m.mlp_width);
  positive("vocab_size", m.vocab);
  positive("max_position_embeddings", m.context);
  m.positional = PositionalKind::Rope;
  return m;
}

std::size_t llama_shaped_head_dim(const ModelConfig& m) {
  if (m.head_dim != 0) return m.head_dim;
  if (m.d_model % m.heads != 0) {
    throw Error("config.json's hidden_size " + std::to_string(m.d_model) +
                " is not divisible by num_attention_heads " + std::to_string(m.heads) +
                " (and there is no head_dim)");
  }
  return m.d_model / m.heads;
}

void refuse_rope_parameters(const ConfigJson& config, const char* read_instead) {
  if (config.has("rope_parameters")) {
    throw Error(
        "config.json has rope_parameters (transformers 5's layout), which is not read here; "
        "supported: " +
        std::string(read_instead));
  }
}

BlockConfig read_swiglu_rms_norm(ModelConfig& m, const ConfigJson& config,
                                 const FamilyDescription& family, double default_eps) {
  const std::string act = config.string_or("hidden_act", "silu");
  if (act != "silu") {
    throw Error("config.json's hidden_act is '" + act.substr(0, 40) +
                "'; supported: silu (SwiGLU, as every " + std::string(family.display_name) +
                " checkpoint has)");
  }
  m.norm = NormKind::RmsNorm;
  m.norm_eps = config.number_or("rms_norm_eps", default_eps);
  m.tied = config.boolean_or("tie_word_embeddings", false);
  BlockConfig block;
  block.mlp = MlpKind::Gated;
  block.activation = Activation::Silu;
  block.rope.pairing = RopePairing::RotateHalf;
  block.rope.base = config.number_or("rope_theta", 10000.0);
  return block;
}

void add_llama_attention(std::vector<FamilyTensor>& tensors, const std::string& stored,
                         const std::string& ours) {
  using enum Dim;
  const std::pair<const char*, std::pair<RowBlock, Dim>> qkv[] = {
      {"q_proj", {RowBlock::Query, QWidth}},
      {"k_proj", {RowBlock::Key, KvWidth}},
      {"v_proj", {RowBlock::Value, KvWidth}}};
  for (const auto& [name, block] : qkv) {
    const std::string projection = stored + name;
    tensors.push_back({projection + ".weight",
                       ours + "attn.in_proj_weight",
                       {block.second, DModel},
                       StoredLayout::AsIs,
                       block.first});
    tensors.push_back({projection + ".bias",
                       ours + "attn.in_proj_bias",
                       {block.second},
                       StoredLayout::AsIs,
                       block.first});
  }
  tensors.push_back({stored + "o_proj.weight", ours + "attn.out_proj.weight", {DModel, QWidth}});
  tensors.push_back({stored + "o_proj.bias", ours + "attn.out_proj.bias", {DModel}});
}

void add_llama_mlp(std::vector<FamilyTensor>& tensors, const std::string& stored,
                   const std::string& ours) {
  using enum Dim;
  tensors.push_back({stored + "gate_proj.weight",
                     ours + "mlp.fc.weight",
                     {MlpWidth, DModel},
                     StoredLayout::AsIs,
                     RowBlock::Gate});
  tensors.push_back({stored + "up_proj.weight",
                     ours + "mlp.fc.weight",
                     {MlpWidth, DModel},
                     StoredLayout::AsIs,
                     RowBlock::Up});
  tensors.push_back({stored + "gate_proj.bias",
                     ours + "mlp.fc.bias",
                     {MlpWidth},
                     StoredLayout::AsIs,
                     RowBlock::Gate});
  tensors.push_back({stored + "up_proj.bias",
                     ours + "mlp.fc.bias",
                     {MlpWidth},
                     StoredLayout::AsIs,
                     RowBlock::Up});
  tensors.push_back({stored + "down_proj.weight", ours + "mlp.proj.weight", {DModel, MlpWidth}});
  tensors.push_back({stored + "down_proj.bias", ours + "mlp.proj.bias", {DModel}});
}

std::vector<FamilyTensor> llama_shaped_tensors(NormPlacement norms, QkNorm qk_norm) {
  using enum Dim;
  const std::string m = "model.layers.{i}.", ours = "layers.{i}.";
  const bool before = norms != NormPlacement::Post, after = norms != NormPlacement::Pre;
  const auto norm = [&](const char* stored, const char* name) {
    return FamilyTensor{m + stored + ".weight", ours + name + ".weight", {DModel}};
  };
  std::vector<FamilyTensor> tensors{{"model.embed_tokens.weight", "embed.weight", {Vocab, DModel}}};
  if (before) tensors.push_back(norm("input_layernorm", "ln1"));
  add_llama_attention(tensors, m + "self_attn.", ours);
  if (qk_norm != QkNorm::None) {
    const bool per_head = qk_norm == QkNorm::PerHead;
    tensors.push_back({m + "self_attn.q_norm.weight",
                       ours + "attn.q_norm.weight",
                       {per_head ? HeadDim : QWidth}});
    tensors.push_back({m + "self_attn.k_norm.weight",
                       ours + "attn.k_norm.weight",
                       {per_head ? HeadDim : KvWidth}});
  }
  tensors.push_back(norm("post_attention_layernorm", after ? "ln1_post" : "ln2"));
  if (norms == NormPlacement::Both) tensors.push_back(norm("pre_feedforward_layernorm", "ln2"));
  add_llama_mlp(tensors, m + "mlp.", ours);
  if (after) tensors.push_back(norm("post_feedforward_layernorm", "ln2_post"));
  tensors.push_back({"model.norm.weight", "ln_f.weight", {DModel}});
  tensors.push_back(
      {"lm_head.weight", "unembed.weight", {Vocab, DModel}, StoredLayout::Unembedding});
  return tensors;
}

std::vector<GgufConfigKey> llama_shaped_gguf_config_keys() {
  return {{"block_count", "num_hidden_layers", true},
          {"context_length", "max_position_embeddings", true},
          {"embedding_length", "hidden_size", true},
          {"feed_forward_length", "intermediate_size", true},
          {"attention.head_count", "num_attention_heads", true},
          {"attention.head_count_kv", "num_key_value_heads"},
          {"attention.key_length", "head_dim"},
          {"attention.layer_norm_rms_epsilon", "rms_norm_eps"},
          {"rope.freq_base", "rope_theta"}};
}

FamilyGguf llama_shaped_gguf(std::string_view architecture, bool permuted_qk) {
  const std::string blk = "blk.{i}.", m = "model.layers.{i}.";
  std::vector<GgufTensorName> tensors{{"token_embd.weight", "model.embed_tokens.weight", {}},
                                      {blk + "attn_norm.weight", m + "input_layernorm.weight", {}}};
  const std::pair<const char*, const char*> attention[] = {
      {"attn_q", "q_proj"}, {"attn_k", "k_proj"}, {"attn_v", "v_proj"}, {"attn_output", "o_proj"}};
  for (const auto& [gguf, stored] : attention) {
    const bool rope = permuted_qk && (stored[0] == 'q' || stored[0] == 'k');
    const std::optional<StoredLayout> layout =
        rope ? std::optional(StoredLayout::RopeInterleaved) : std::nullopt;
    for (const char* part : {".weight", ".bias"}) {
      tensors.push_back({blk + gguf + part, m + "self_attn." + stored + part, layout});
    }
  }
  tensors.push_back({blk + "attn_q_norm.weight", m + "self_attn.q_norm.weight", {}});
  tensors.push_back({blk + "attn_k_norm.weight", m + "self_attn.k_norm.weight", {}});
  tensors.push_back({blk + "ffn_norm.weight", m + "post_attention_layernorm.weight", {}});
  for (const auto& [gguf, stored] :
       {std::pair{"ffn_gate", "gate_proj"}, std::pair{"ffn_up", "up_proj"},
        std::pair{"ffn_down", "down_proj"}}) {
    for (const char* part : {".weight", ".bias"}) {
      tensors.push_back({blk + gguf + part, m + "mlp." + stored + part, {}});
    }
  }
  tensors.push_back({"output_norm.weight", "model.norm.weight", {}});
  tensors.push_back({"output.weight", "lm_head.weight", {}});
  return FamilyGguf{
      .architecture = architecture,
      .tensors = std::move(tensors),
      .config_keys = llama_shaped_gguf_config_keys(),
      .implied_config = "\"hidden_act\": \"silu\"",
  };
}

FamilyDescription llama_shaped_description(std::string_view model_type, std::string_view display,
                                           std::string_view supported,
                                           std::vector<FamilyTensor> tensors,
                                           FamilyConfigReader read,
                                           std::vector<std::string_view> ignored, FamilyGguf gguf) {
  return FamilyDescription{
      .family = model_type,
      .model_type = model_type,
      .display_name = display,
      .supported = supported,
      .name_prefix = "",
      .size_keys = {"num_hidden_layers", "num_attention_heads", "hidden_size",
                    "max_position_embeddings", "", "vocab_size"},
      .tensors = std::move(tensors),
      .ignored = std::move(ignored),
      .read_config = read,
      .gguf = std::move(gguf),
  };
}

}  // namespace attn
