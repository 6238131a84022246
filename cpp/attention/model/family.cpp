// The registry of checkpoint families and matching stored names against a family's tensors
// (family.hpp).
#include "attention/model/family.hpp"

#include <utility>

namespace attn {

std::span<const FamilyDescription* const> families() {
  static const FamilyDescription* const all[] = {
      &gpt2_family(),     &llama_family(), &qwen2_family(),  &mistral_family(),
      &gpt_neox_family(), &qwen3_family(), &gemma2_family(), &gemma3_text_family(),
      &olmo2_family(),    &phi3_family(),
  };
  return all;
}

const FamilyDescription* family_of_model_type(std::string_view model_type) {
  for (const FamilyDescription* family : families()) {
    if (family->model_type == model_type) return family;
  }
  return nullptr;
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
      case Dim::QkvWidth:
        out.push_back(sizes.q_width + 2 * sizes.kv_width);
        break;
      case Dim::HeadDim:
        out.push_back(sizes.head_dim);
        break;
      case Dim::MlpWidth:
        out.push_back(sizes.mlp_width);
        break;
      case Dim::MlpWidth2:
        out.push_back(2 * sizes.mlp_width);
        break;
    }
  }
  return out;
}

}  // namespace attn
