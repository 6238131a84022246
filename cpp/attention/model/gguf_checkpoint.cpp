// GGUF checkpoints' family, config and tensor names, see gguf_checkpoint.hpp.
#include "attention/model/gguf_checkpoint.hpp"

#include <algorithm>
#include <cstdio>

#include "attention/error.hpp"

namespace attn {

namespace {

using gguf::is_integer;
using gguf::ValueType;

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;  // never in the keys and names written
    out += c;
  }
  return out + "\"";
}

const StoredTensor* find_tensor(const CheckpointFile& file, std::string_view name) {
  for (const StoredTensor& tensor : file.tensors) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

}  // namespace

const FamilyDescription* family_of_gguf_architecture(std::string_view architecture) {
  for (const FamilyDescription* family : families()) {
    if (!family->gguf.architecture.empty() && family->gguf.architecture == architecture) {
      return family;
    }
  }
  return nullptr;
}

std::string gguf_architecture_names() {
  std::string out;
  for (const FamilyDescription* family : families()) {
    if (family->gguf.architecture.empty()) continue;
    out += (out.empty() ? "" : ", ") + std::string(family->gguf.architecture);
  }
  return out;
}

std::string gguf_config_json(const CheckpointFile& file) {
  if (!file.gguf) throw Error("the checkpoint file is not a GGUF file");
  const gguf::Metadata& metadata = file.gguf->metadata;
  const gguf::Value* named = metadata.find("general.architecture");
  if (named == nullptr || named->type != ValueType::String) {
    throw Error(
        "the GGUF file has no general.architecture (a string naming its model's architecture); "
        "supported architectures: " +
        gguf_architecture_names());
  }
  const std::string& architecture = metadata.string("general.architecture");
  const FamilyDescription* family = family_of_gguf_architecture(architecture);
  if (family == nullptr) {
    throw Error("the GGUF file's general.architecture is '" + architecture.substr(0, 40) +
                "', which is not read from GGUF files; supported: " + gguf_architecture_names());
  }
  const std::string prefix = architecture + ".";
  std::string json = "{\"model_type\": " + json_string(family->model_type);
  for (const GgufConfigKey& key : family->gguf.config_keys) {
    const std::string name = prefix + std::string(key.gguf);
    const gguf::Value* value = metadata.find(name);
    if (value == nullptr) {
      if (key.required) {
        throw Error("the GGUF file's metadata has no " + name + " (config.json's " +
                    std::string(key.config) + "); a " + std::string(family->display_name) +
                    " GGUF file has it");
      }
      continue;
    }
    std::string number;
    if (value->type == ValueType::Bool) {
      number = metadata.boolean(name) ? "true" : "false";
    } else if (is_integer(value->type)) {
      number = std::to_string(metadata.integer(name));
    } else if (value->type == ValueType::F32 || value->type == ValueType::F64) {
      char text[40];
      std::snprintf(text, sizeof text, "%.17g", metadata.number(name));
      number = text;
    } else {
      throw Error("the GGUF file's " + name + " is " + value->type_text() +
                  "; a number was expected");
    }
    json += ", " + json_string(key.config) + ": " + number;
  }
  if (const gguf::Value* scaling = metadata.find(prefix + "rope.scaling.type")) {
    const std::string type =
        scaling->type == ValueType::String ? metadata.string(prefix + "rope.scaling.type") : "";
    const bool linear = family->gguf.linear_rope_scaling;
    if (type == "linear" && linear) {
      // config.json's linear rope_scaling (θ_i / factor), as the family's reader applies it
      const std::string factor = prefix + "rope.scaling.factor";
      const gguf::Value* value = metadata.find(factor);
      if (value == nullptr || (value->type != ValueType::F32 && value->type != ValueType::F64 &&
                               !is_integer(value->type))) {
        throw Error("the GGUF file's " + prefix + "rope.scaling.type is 'linear' but " + factor +
                    " is missing or not a number");
      }
      char text[40];
      std::snprintf(text, sizeof text, "%.17g", metadata.number(factor));
      json +=
          ", \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": " + std::string(text) + "}";
    } else if (type != "none") {
      throw Error("the GGUF file's " + prefix + "rope.scaling.type is '" + type.substr(0, 40) +
                  "'; supported: none" + (linear ? " and linear" : "") +
                  " (other RoPE scaling in GGUF files is not read yet)");
    }
  }
  // RoPE scaling as llama.cpp stores it: factors per rotated pair, as tensors. Llama 3's
  // (rope_freqs.weight) is read by the families that have it; Phi-3's LongRoPE is not.
  const std::pair<const char*, const char*> scaling_tensors[] = {
      {"rope_freqs.weight", "Llama 3.1's RoPE scaling"},
      {"rope_factors_long.weight", "Phi-3's LongRoPE"},
      {"rope_factors_short.weight", "Phi-3's LongRoPE"}};
  for (const auto& [name, what] : scaling_tensors) {
    if (family->gguf.rope_factors && name == kRopeFactorsTensor) continue;
    if (find_tensor(file, name) != nullptr) {
      throw Error("the GGUF file has " + std::string(name) + " (" + what +
                  " as llama.cpp stores it), which is not read for the " + architecture +
                  " architecture; supported: GGUF files without RoPE scaling, and Llama 3.1's "
                  "and 3.2's (rope_freqs.weight) in llama files");
    }
  }
  // A multimodal file's vision tower or projector (llama.cpp writes them as v.* and mm.*).
  for (const StoredTensor& tensor : file.tensors) {
    if (tensor.name.starts_with("v.") || tensor.name.starts_with("mm.")) {
      throw Error("the GGUF file has '" + tensor.name.substr(0, 80) +
                  "', a vision tower's or projector's tensor; only text models are read from "
                  "GGUF files (" +
                  gguf_architecture_names() + ": a text-only file, as llama.cpp's converter " +
                  "writes one, with the vision part in a separate mmproj file)");
    }
  }
  const StoredTensor* embedding = find_tensor(file, "token_embd.weight");
  if (embedding == nullptr || embedding->shape.size() != 2) {
    throw Error(
        "the GGUF file has no token_embd.weight (the token embedding, [vocab, d_model]); "
        "is it a " +
        std::string(family->display_name) + " model?");
  }
  json += ", \"vocab_size\": " + std::to_string(embedding->shape[0]);
  const bool tied = find_tensor(file, "output.weight") == nullptr;
  json += std::string(", \"tie_word_embeddings\": ") + (tied ? "true" : "false");
  const bool attention_bias = find_tensor(file, "blk.0.attn_q.bias") != nullptr ||
                              find_tensor(file, "blk.0.attn_qkv.bias") != nullptr;
  json += std::string(", \"attention_bias\": ") + (attention_bias ? "true" : "false");
  const bool mlp_bias = find_tensor(file, "blk.0.ffn_gate.bias") != nullptr;
  json += std::string(", \"mlp_bias\": ") + (mlp_bias ? "true" : "false");
  if (!family->gguf.implied_config.empty()) json += ", " + std::string(family->gguf.implied_config);
  if (family->gguf.derived_config != nullptr) {
    const std::string derived = family->gguf.derived_config(metadata, prefix);
    if (!derived.empty()) json += ", " + derived;
  }
  return json + "}";
}

CheckpointConfig gguf_checkpoint_config(const CheckpointFile& file) {
  const std::string json = gguf_config_json(file);
  const gguf::Metadata& metadata = file.gguf->metadata;
  const std::string& architecture = metadata.string("general.architecture");
  CheckpointConfig config;
  try {
    config = checkpoint_config(ConfigJson(json));
  } catch (const Error& error) {
    throw Error("the GGUF file's metadata (" + architecture +
                ".*, read as config.json): " + error.what());
  }
  // RoPE over the dimensions the family's config turns (every one of a head's, or GPT-NeoX's
  // rotary_pct of them): rope.dimension_count must say the same.
  const std::string rope_dims = architecture + ".rope.dimension_count";
  if (metadata.contains(rope_dims) && config.model.positional == PositionalKind::Rope) {
    const std::size_t head_dim = attention_shape(config.model).head_dim;
    const std::size_t rotated = config.model.blocks.front().rope.rotated(head_dim);
    if (metadata.integer(rope_dims) != std::int64_t(rotated)) {
      throw Error("the GGUF file's " + rope_dims + " is " +
                  std::to_string(metadata.integer(rope_dims)) +
                  "; supported: " + std::to_string(rotated) +
                  (rotated == head_dim ? " (RoPE on every dimension of a head)"
                                       : " (the dimensions of each head the config turns)"));
    }
  }
  if (const gguf::Value* eos = metadata.find("tokenizer.ggml.eos_token_id");
      eos != nullptr && is_integer(eos->type)) {
    const std::int64_t id = metadata.integer("tokenizer.ggml.eos_token_id");
    if (id >= 0 && std::size_t(id) < config.model.vocab) config.eos_ids = {std::int32_t(id)};
  }
  return config;
}

FamilyDescription gguf_view(const FamilyDescription& family) {
  FamilyDescription view = family;
  view.name_prefix = "";
  view.ignored.clear();
  view.tensors.clear();
  for (const GgufTensorName& name : family.gguf.tensors) {
    const auto source =
        std::find_if(family.tensors.begin(), family.tensors.end(),
                     [&](const FamilyTensor& t) { return t.stored == name.stored; });
    if (source == family.tensors.end()) continue;  // a tensor of another family of the same shape
    FamilyTensor tensor = *source;
    tensor.stored = name.gguf;
    if (name.layout) {
      if (source->layout == StoredLayout::Transposed && *name.layout == StoredLayout::AsIs) {
        std::reverse(tensor.shape.begin(), tensor.shape.end());
      }
      tensor.layout = *name.layout;
    }
    view.tensors.push_back(std::move(tensor));
  }
  return view;
}

}  // namespace attn
