// The checkpoint families' descriptions and matching names against them (family.hpp).
#include "attention/model/family.hpp"

#include <utility>

namespace attn {

namespace {

// GPT-2's tensors: its Conv1D layers store the weight [in, out] (transposed against ours) beside
// the bias [out]; a LayerNorm its weight and bias.
std::vector<FamilyTensor> gpt2_tensors() {
  using enum Dim;
  std::vector<FamilyTensor> tensors{{"wte.weight", "embed.weight", {Vocab, DModel}},
                                    {"wpe.weight", "pos.weight", {Context, DModel}}};
  const auto norm = [&](const std::string& stored, const std::string& ours) {
    for (const char* part : {".weight", ".bias"}) {
      tensors.push_back({stored + part, ours + part, {DModel}});
    }
  };
  const auto conv1d = [&](const std::string& stored, const std::string& weight,
                          const std::string& bias, Dim in, Dim out) {
    tensors.push_back({stored + ".weight", weight, {in, out}, StoredLayout::Transposed});
    tensors.push_back({stored + ".bias", bias, {out}});
  };
  const std::string h = "h.{i}.", ours = "layers.{i}.";
  norm(h + "ln_1", ours + "ln1");
  conv1d(h + "attn.c_attn", ours + "attn.in_proj_weight", ours + "attn.in_proj_bias", DModel,
         DModel3);
  conv1d(h + "attn.c_proj", ours + "attn.out_proj.weight", ours + "attn.out_proj.bias", DModel,
         DModel);
  norm(h + "ln_2", ours + "ln2");
  conv1d(h + "mlp.c_fc", ours + "mlp.fc.weight", ours + "mlp.fc.bias", DModel, DModel4);
  conv1d(h + "mlp.c_proj", ours + "mlp.proj.weight", ours + "mlp.proj.bias", DModel4, DModel);
  norm("ln_f", "ln_f");
  tensors.push_back({"lm_head.weight", "embed.weight", {Vocab, DModel}, StoredLayout::TiedCopy});
  return tensors;
}

// The Llama family's tensors (transformers' LlamaForCausalLM, Qwen2ForCausalLM,
// MistralForCausalLM): nn.Linear weights [out, in] as ours, q/k/v into in_proj's row blocks,
// gate/up into SwiGLU's fc; biases only where the config has them (the model's parameter table
// says which are expected).
std::vector<FamilyTensor> llama_tensors() {
  using enum Dim;
  const std::string m = "model.layers.{i}.", ours = "layers.{i}.";
  std::vector<FamilyTensor> tensors{{"model.embed_tokens.weight", "embed.weight", {Vocab, DModel}}};
  tensors.push_back({m + "input_layernorm.weight", ours + "ln1.weight", {DModel}});
  const std::pair<const char*, std::pair<RowBlock, Dim>> qkv[] = {
      {"q_proj", {RowBlock::Query, QWidth}},
      {"k_proj", {RowBlock::Key, KvWidth}},
      {"v_proj", {RowBlock::Value, KvWidth}}};
  for (const auto& [name, block] : qkv) {
    const std::string stored = m + "self_attn." + name;
    tensors.push_back({stored + ".weight",
                       ours + "attn.in_proj_weight",
                       {block.second, DModel},
                       StoredLayout::AsIs,
                       block.first});
    tensors.push_back({stored + ".bias",
                       ours + "attn.in_proj_bias",
                       {block.second},
                       StoredLayout::AsIs,
                       block.first});
  }
  tensors.push_back(
      {m + "self_attn.o_proj.weight", ours + "attn.out_proj.weight", {DModel, QWidth}});
  tensors.push_back({m + "self_attn.o_proj.bias", ours + "attn.out_proj.bias", {DModel}});
  tensors.push_back({m + "post_attention_layernorm.weight", ours + "ln2.weight", {DModel}});
  tensors.push_back({m + "mlp.gate_proj.weight",
                     ours + "mlp.fc.weight",
                     {MlpWidth, DModel},
                     StoredLayout::AsIs,
                     RowBlock::Gate});
  tensors.push_back({m + "mlp.up_proj.weight",
                     ours + "mlp.fc.weight",
                     {MlpWidth, DModel},
                     StoredLayout::AsIs,
                     RowBlock::Up});
  tensors.push_back({m + "mlp.gate_proj.bias",
                     ours + "mlp.fc.bias",
                     {MlpWidth},
                     StoredLayout::AsIs,
                     RowBlock::Gate});
  tensors.push_back(
      {m + "mlp.up_proj.bias", ours + "mlp.fc.bias", {MlpWidth}, StoredLayout::AsIs, RowBlock::Up});
  tensors.push_back({m + "mlp.down_proj.weight", ours + "mlp.proj.weight", {DModel, MlpWidth}});
  tensors.push_back({m + "mlp.down_proj.bias", ours + "mlp.proj.bias", {DModel}});
  tensors.push_back({"model.norm.weight", "ln_f.weight", {DModel}});
  tensors.push_back(
      {"lm_head.weight", "unembed.weight", {Vocab, DModel}, StoredLayout::Unembedding});
  return tensors;
}

FamilyDescription llama_shaped(std::string_view family, std::string_view display,
                               std::string_view supported) {
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
  };
}

}  // namespace

const FamilyDescription& llama_family() {
  static const FamilyDescription llama = llama_shaped(
      "llama", "Llama",
      "supported: Llama-family checkpoints (LlamaForCausalLM: Llama 2 and 3, SmolLM2, TinyLlama)");
  return llama;
}

const FamilyDescription& qwen2_family() {
  static const FamilyDescription qwen2 =
      llama_shaped("qwen2", "Qwen2", "supported: Qwen2 and Qwen2.5 checkpoints (Qwen2ForCausalLM)");
  return qwen2;
}

const FamilyDescription& mistral_family() {
  static const FamilyDescription mistral =
      llama_shaped("mistral", "Mistral", "supported: Mistral checkpoints (MistralForCausalLM)");
  return mistral;
}

std::span<const FamilyDescription* const> families() {
  static const FamilyDescription* const all[] = {&gpt2_family(), &llama_family(), &qwen2_family(),
                                                 &mistral_family()};
  return all;
}

const FamilyDescription* family_of_model_type(std::string_view model_type) {
  for (const FamilyDescription* family : families()) {
    if (family->model_type == model_type) return family;
  }
  return nullptr;
}

const FamilyDescription& gpt2_family() {
  static const FamilyDescription gpt2{
      .family = "gpt2",
      .model_type = "gpt2",
      .display_name = "GPT-2",
      .supported =
          "supported: the GPT-2 family (gpt2, distilgpt2 and other GPT2LMHeadModel "
          "checkpoints)",
      .name_prefix = "transformer.",
      .size_keys = {"n_layer", "n_head", "n_embd", "n_positions", "n_ctx", "vocab_size"},
      .tensors = gpt2_tensors(),
      .ignored = {"h.{i}.attn.bias", "h.{i}.attn.masked_bias"},
  };
  return gpt2;
}

namespace {

constexpr std::string_view kLayer = "{i}";
constexpr std::size_t kMaxLayerIndex = 100000;

// The decimal number `name` starts with (a layer index) and how many characters it takes, or
// nothing when it does not start with a digit (or the number is past any model's layers).
std::optional<std::pair<std::size_t, std::size_t>> leading_index(std::string_view name) {
  std::size_t index = 0, length = 0;
  while (length < name.size() && name[length] >= '0' && name[length] <= '9') {
    if (index > kMaxLayerIndex) return std::nullopt;
    index = index * 10 + std::size_t(name[length++] - '0');
  }
  if (length == 0) return std::nullopt;
  return std::make_pair(index, length);
}

// Whether `name` is `pattern` with "{i}" as a decimal number (its layer), or equals a pattern
// without one (no layer).
bool matches(std::string_view pattern, std::string_view name, std::optional<std::size_t>& layer) {
  layer.reset();
  const std::size_t at = pattern.find(kLayer);
  if (at == std::string_view::npos) return pattern == name;
  const std::string_view before = pattern.substr(0, at), after = pattern.substr(at + kLayer.size());
  if (!name.starts_with(before)) return false;
  const auto index = leading_index(name.substr(before.size()));
  if (!index || name.substr(before.size() + index->second) != after) return false;
  layer = index->first;
  return true;
}

std::string with_layer(std::string_view pattern, std::optional<std::size_t> layer) {
  std::string out(pattern);
  if (const std::size_t at = out.find(kLayer); at != std::string::npos && layer) {
    out.replace(at, kLayer.size(), std::to_string(*layer));
  }
  return out;
}

}  // namespace

std::optional<FamilyMatch> match_tensor(const FamilyDescription& family, std::string_view name) {
  for (const FamilyTensor& tensor : family.tensors) {
    std::optional<std::size_t> layer;
    if (matches(tensor.stored, name, layer)) {
      return FamilyMatch{&tensor, layer, with_layer(tensor.ours, layer)};
    }
  }
  return std::nullopt;
}

bool is_ignored(const FamilyDescription& family, std::string_view name) {
  for (const std::string_view pattern : family.ignored) {
    std::optional<std::size_t> layer;
    if (matches(pattern, name, layer)) return true;
  }
  return false;
}

std::optional<std::size_t> layer_of(const FamilyDescription& family, std::string_view name) {
  for (const FamilyTensor& tensor : family.tensors) {
    const std::size_t at = tensor.stored.find(kLayer);
    if (at == std::string_view::npos) continue;
    const std::string_view before = std::string_view(tensor.stored).substr(0, at);
    if (!name.starts_with(before)) continue;
    const auto index = leading_index(name.substr(before.size()));
    if (index && name.substr(before.size() + index->second).starts_with('.')) return index->first;
  }
  return std::nullopt;
}

std::string stored_name(const FamilyDescription& family, std::string_view ours, RowBlock rows) {
  for (const FamilyTensor& tensor : family.tensors) {
    if (tensor.layout == StoredLayout::TiedCopy || tensor.rows != rows) continue;
    std::optional<std::size_t> layer;
    if (matches(tensor.ours, ours, layer)) return with_layer(tensor.stored, layer);
  }
  return std::string(ours);
}

std::vector<std::size_t> shape_of(const std::vector<Dim>& shape, const FamilySizes& sizes) {
  std::vector<std::size_t> out;
  for (const Dim dim : shape) {
    switch (dim) {
      case Dim::DModel:
        out.push_back(sizes.d_model);
        break;
      case Dim::DModel3:
        out.push_back(3 * sizes.d_model);
        break;
      case Dim::DModel4:
        out.push_back(4 * sizes.d_model);
        break;
      case Dim::Vocab:
        out.push_back(sizes.vocab);
        break;
      case Dim::Context:
        out.push_back(sizes.context);
        break;
      case Dim::QWidth:
        out.push_back(sizes.q_width);
        break;
      case Dim::KvWidth:
        out.push_back(sizes.kv_width);
        break;
      case Dim::MlpWidth:
        out.push_back(sizes.mlp_width);
        break;
    }
  }
  return out;
}

}  // namespace attn
