// The Llama family as checkpoint families (transformers' LlamaForCausalLM, Qwen2ForCausalLM and
// MistralForCausalLM): their config.json keys (LlamaConfig, Qwen2Config, MistralConfig; every
// switch the core does not implement refused by name) and their tensors: nn.Linear weights [out,
// in], q/k/v into in_proj's row blocks, gate/up into the gated MLP's fc, RMSNorm, rotate-half RoPE
// with Llama 3's scaling, grouped-query attention; Qwen2 adds q/k/v biases, Mistral a sliding
// window. Also what every Llama-shaped family shares (llama_shaped.hpp).
#include <string>
#include <utility>

#include "attention/error.hpp"
#include "attention/message_text.hpp"
#include "attention/model/checkpoint_config.hpp"
#include "attention/model/families/llama_shaped.hpp"
#include "attention/model/family.hpp"

namespace attn {

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

void refuse_rope_parameters(const ConfigJson& config, const char* read_instead) {
  if (config.has("rope_parameters")) {
    throw Error(
        "config.json has rope_parameters (transformers 5's layout), which is not read here; "
        "supported: " +
        std::string(read_instead));
  }
}

namespace {

// The Llama family's tensors (transformers' LlamaForCausalLM, Qwen2ForCausalLM,
// MistralForCausalLM): nn.Linear weights [out, in] as ours, q/k/v into in_proj's row blocks,
// gate/up into SwiGLU's fc; biases only where the config has them (the model's parameter table
// says which are expected).
std::vector<FamilyTensor> llama_tensors() {
  using enum Dim;
  const std::string m = "model.layers.{i}.", ours = "layers.{i}.";
  std::vector<FamilyTensor> tensors{{"model.embed_tokens.weight", "embed.weight", {Vocab, DModel}}};
  tensors.push_back({m + "input_layernorm.weight", ours + "ln1.weight", {DModel}});
  add_llama_attention(tensors, m + "self_attn.", ours);
  tensors.push_back({m + "post_attention_layernorm.weight", ours + "ln2.weight", {DModel}});
  add_llama_mlp(tensors, m + "mlp.", ours);
  tensors.push_back({"model.norm.weight", "ln_f.weight", {DModel}});
  tensors.push_back(
      {"lm_head.weight", "unembed.weight", {Vocab, DModel}, StoredLayout::Unembedding});
  return tensors;
}

// The keys the three share: sizes, RMSNorm's ε, tied embeddings, SiLU, RoPE's θ and scaling.
// `biases` and `window` are each family's own.
ModelConfig llama_config(const ConfigJson& config, const FamilyDescription& family,
                         LinearBiases biases, std::size_t window) {
  ModelConfig m = llama_shaped_sizes(config, family);
  const std::string act = config.string_or("hidden_act", "silu");
  if (act != "silu") {
    throw Error("config.json's hidden_act is '" + act.substr(0, 40) +
                "'; supported: silu (SwiGLU, as every " + std::string(family.display_name) +
                " checkpoint has)");
  }
  m.norm = NormKind::RmsNorm;
  m.norm_eps = config.number_or("rms_norm_eps", 1e-6);
  m.tied = config.boolean_or("tie_word_embeddings", false);
  BlockConfig block;
  block.mlp = MlpKind::Gated;
  block.activation = Activation::Silu;
  block.rope.pairing = RopePairing::RotateHalf;
  block.rope.base = config.number_or("rope_theta", 10000.0);
  block.window = window;
  m.bias = biases;
  if (config.number_or("partial_rotary_factor", 1.0) != 1.0) {
    throw Error("config.json's partial_rotary_factor is " +
                number_text(config.number_or("partial_rotary_factor", 1.0)) +
                "; supported: 1 (RoPE on every dimension of a head)");
  }
  set_uniform_blocks(m, block);
  if (m.heads != 0 && m.d_model % m.heads != 0 && m.head_dim == 0) {
    throw Error("config.json's hidden_size " + std::to_string(m.d_model) +
                " is not divisible by num_attention_heads " + std::to_string(m.heads) +
                " (and there is no head_dim)");
  }
  validate_checkpoint(m);
  const std::vector<double> frequencies = rope_scaling_frequencies(
      config, m.head_dim ? m.head_dim : m.d_model / m.heads, block.rope.base);
  for (BlockConfig& each : m.blocks) each.rope.frequencies = frequencies;
  return m;
}

FamilyDescription llama_shaped(std::string_view family, std::string_view display,
                               std::string_view supported, FamilyConfigReader read) {
  return FamilyDescription{
      .family = family,
      .model_type = family,
      .display_name = display,
      .supported = supported,
      .name_prefix = "",
      .size_keys = {"num_hidden_layers", "num_attention_heads", "hidden_size",
                    "max_position_embeddings", "", "vocab_size"},
      .tensors = llama_tensors(),
      // Older conversions keep RoPE's inverse frequencies as a buffer.
      .ignored = {"model.layers.{i}.self_attn.rotary_emb.inv_freq"},
      .read_config = read,
  };
}

}  // namespace

const FamilyDescription& llama_family() {
  static const FamilyDescription llama = llama_shaped(
      "llama", "Llama",
      "supported: Llama-family checkpoints (LlamaForCausalLM: Llama 2 and 3, SmolLM2, TinyLlama)",
      [](const ConfigJson& config, const FamilyDescription& family) {
        const bool attention_bias = config.boolean_or("attention_bias", false);
        return llama_config(config, family,
                            {attention_bias, attention_bias, config.boolean_or("mlp_bias", false)},
                            0);
      });
  return llama;
}

const FamilyDescription& qwen2_family() {
  static const FamilyDescription qwen2 = llama_shaped(
      "qwen2", "Qwen2", "supported: Qwen2 and Qwen2.5 checkpoints (Qwen2ForCausalLM)",
      [](const ConfigJson& config, const FamilyDescription& family) {
        if (config.boolean_or("use_sliding_window", false)) {
          throw Error(
              "config.json has use_sliding_window true (Qwen2's sliding window on the layers "
              "from max_window_layers on); supported: false");
        }
        // Qwen2's q/k/v projections always have biases, o_proj and the MLP none.
        return llama_config(config, family, {true, false, false}, 0);
      });
  return qwen2;
}

const FamilyDescription& mistral_family() {
  static const FamilyDescription mistral =
      llama_shaped("mistral", "Mistral", "supported: Mistral checkpoints (MistralForCausalLM)",
                   [](const ConfigJson& config, const FamilyDescription& family) {
                     return llama_config(config, family, {false, false, false},
                                         config.count_or("sliding_window", 0));
                   });
  return mistral;
}

}  // namespace attn
