// Reading a Hugging Face GPT-2 checkpoint into a Model, see gpt2_checkpoint.hpp.
#include "attention/model/gpt2_checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

#include "attention/error.hpp"
#include "attention/model/family.hpp"

namespace attn {

namespace {

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string str(std::uint64_t value) {
  return std::to_string(value);
}

const FamilyDescription& family() {
  return gpt2_family();
}

std::string strip_prefix(const std::string& name) {
  const std::string_view prefix = family().name_prefix;
  return name.starts_with(prefix) ? name.substr(prefix.size()) : name;
}

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

// A family that is not GPT-2, recognised by its tensor names (for a clear refusal).
std::optional<std::string> other_family(const std::string& name) {
  if (name.starts_with("bert.") || contains(name, "embeddings.word_embeddings") ||
      contains(name, "attention.self.query"))
    return "BERT";
  if (contains(name, "self_attn.q_proj") || contains(name, "model.embed_tokens") ||
      contains(name, "mlp.gate_proj"))
    return "Llama";
  if (name.starts_with("gpt_neox.")) return "GPT-NeoX";
  if (contains(name, "encoder.block.") || contains(name, "decoder.block.")) return "T5";
  if (contains(name, "model.decoder.layers.")) return "OPT/BART";
  return std::nullopt;
}

void check_config(const Gpt2Config& c) {
  if (c.model_type != "gpt2") {
    throw Error("config.json has model_type '" + c.model_type.substr(0, 40) + "'; " +
                std::string(family().supported) + ", model_type 'gpt2'");
  }
  const auto positive = [](const char* field, std::size_t value) {
    if (value == 0) throw Error(std::string("config.json needs a positive ") + field + ", got 0");
  };
  positive("n_layer", c.n_layer);
  positive("n_head", c.n_head);
  positive("n_embd", c.n_embd);
  positive("n_positions", c.n_positions);
  positive("vocab_size", c.vocab_size);
  if (c.n_embd % c.n_head != 0) {
    throw Error("config.json's n_embd " + str(c.n_embd) + " is not divisible by n_head " +
                str(c.n_head));
  }
  if (c.n_inner != 0 && c.n_inner != 4 * c.n_embd) {
    throw Error("config.json's n_inner is " + str(c.n_inner) +
                "; supported: null or 4 · n_embd = " + str(4 * c.n_embd));
  }
  if (!(std::abs(c.layer_norm_epsilon - 1e-5) <= 1e-12)) {
    throw Error("config.json's layer_norm_epsilon is " + std::to_string(c.layer_norm_epsilon) +
                "; supported: 1e-05 (GPT-2's)");
  }
  if (c.activation_function != "gelu_new" && c.activation_function != "gelu_pytorch_tanh" &&
      c.activation_function != "gelu") {
    throw Error("config.json's activation_function is '" + c.activation_function.substr(0, 40) +
                "'; supported: gelu_new, gelu_pytorch_tanh (GELU's tanh form) and gelu (erf)");
  }
  if (!c.scale_attn_weights) {
    throw Error("config.json has scale_attn_weights false; supported: true (scores / √d_k)");
  }
  if (c.scale_attn_by_inverse_layer_idx) {
    throw Error("config.json has scale_attn_by_inverse_layer_idx true; supported: false");
  }
}

}  // namespace

DefaultTokenizer default_tokenizer(std::size_t vocab) {
  if (vocab >= kGpt2TokenizerVocab) return {true, ""};
  return {false, "this checkpoint has " + str(vocab) +
                     " token ids, fewer than GPT-2's tokenizer's " + str(kGpt2TokenizerVocab) +
                     ": pass loadCheckpoint a tokenizer (tokenizer.json, or { vocab, merges })"};
}

Gpt2Import::Gpt2Import(std::span<const std::uint8_t> head, std::uint64_t file_size,
                       const Gpt2Config& config) {
  safetensors::Limits limits;
  limits.max_total_bytes = std::numeric_limits<std::size_t>::max();
  limits.max_tensors = 4096;
  const safetensors::Index index = safetensors::parse_index(head, file_size, limits);
  if (index.tensors.empty())
    throw Error("the checkpoint has no tensors; " + std::string(family().supported));
  for (const auto& tensor : index.tensors) {
    if (const auto other = other_family(tensor.name)) {
      throw Error("this looks like a " + *other + " checkpoint (tensor '" +
                  tensor.name.substr(0, 80) + "'); " + std::string(family().supported));
    }
  }
  check_config(config);
  const std::size_t d = config.n_embd, vocab = config.vocab_size, context = config.n_positions;

  // Layers present in the file, to name a disagreement with n_layer.
  std::size_t file_layers = 0;
  for (const auto& tensor : index.tensors) {
    if (const auto layer = layer_of(family(), strip_prefix(tensor.name))) {
      file_layers = std::max(file_layers, *layer + 1);
    }
  }
  if (file_layers != config.n_layer) {
    throw Error("config.json says n_layer " + str(config.n_layer) + " but the checkpoint has " +
                str(file_layers) + " layers (h.0 … h." + str(file_layers ? file_layers - 1 : 0) +
                ")");
  }

  ModelConfig model_config;
  model_config.vocab = vocab;
  model_config.context = context;
  model_config.d_model = d;
  model_config.heads = config.n_head;
  model_config.layers = config.n_layer;
  model_config.positional = PositionalKind::Learned;
  model_config.layer_norm = true;
  model_config.mlp = true;
  model_config.tied = true;
  model_config.bias = true;
  model_config.gelu = config.activation_function == "gelu" ? GeluKind::Erf : GeluKind::Tanh;
  model_config.checkpoint = true;
  model_config.seed = 0;  // nothing is drawn: every parameter comes from the file
  try {
    validate(model_config);
  } catch (const Error& error) {
    throw Error(std::string("this checkpoint is outside what a tab can load: ") + error.what());
  }
  // Parameters: embed, pos, per layer 12·d² + 13·d, ln_f.
  const std::uint64_t per_layer = 12 * std::uint64_t{d} * d + 13 * std::uint64_t{d};
  const std::uint64_t parameters = std::uint64_t{vocab} * d + std::uint64_t{context} * d +
                                   per_layer * config.n_layer + 2 * std::uint64_t{d};
  if (parameters * 4 > kMaxCheckpointParameterBytes) {
    throw Error("this checkpoint is too large for the tab: " + str(parameters) +
                " parameters need " + str(parameters * 4 / 1000000) +
                " MB as float32, the limit is " + str(kMaxCheckpointParameterBytes / 1000000) +
                " MB (gpt2 and distilgpt2 fit; gpt2-medium and larger do not)");
  }

  std::map<std::string, std::string> seen;  // our parameter → the file's name (duplicates)
  std::vector<std::pair<const safetensors::TensorInfo*, Target>> found;
  for (const auto& tensor : index.tensors) {
    const std::string name = strip_prefix(tensor.name);
    if (is_ignored(family(), name)) continue;
    const auto match = match_tensor(family(), name);
    if (!match) {
      throw Error("the checkpoint's tensor '" + tensor.name.substr(0, 80) + "' " +
                  shape_text(tensor.shape) + " is not a GPT-2 tensor; " +
                  std::string(family().supported));
    }
    if (match->layer && *match->layer >= config.n_layer) {
      throw Error("tensor '" + tensor.name + "' is in a layer past n_layer " + str(config.n_layer));
    }
    const std::vector<std::size_t> stored_shape = shape_of(match->tensor->shape, d, vocab, context);
    if (tensor.shape != stored_shape) {
      throw Error("the checkpoint's tensor '" + tensor.name + "' has shape " +
                  shape_text(tensor.shape) + ", config.json (n_embd " + str(d) + ", vocab_size " +
                  str(vocab) + ", n_positions " + str(context) + ") needs " +
                  shape_text(stored_shape));
    }
    if (tensor.dtype == safetensors::DType::U8 || tensor.dtype == safetensors::DType::Bool) {
      throw Error("the checkpoint's tensor '" + tensor.name + "' is " +
                  safetensors::dtype_name(tensor.dtype) + "; supported: F32, F16, BF16 (and F64)");
    }
    const bool tied_copy = match->tensor->layout == StoredLayout::TiedCopy;
    const std::string key = tied_copy ? std::string(match->tensor->stored) : match->ours;
    if (!seen.emplace(key, tensor.name).second) {
      throw Error("the checkpoint has both '" + seen[key] + "' and '" + tensor.name +
                  "' (the same tensor with and without the transformer. prefix)");
    }
    Target target;
    target.parameter = match->ours;
    target.transpose = match->tensor->layout == StoredLayout::Transposed;
    target.compare_to_embed = tied_copy;
    target.dtype = tensor.dtype;
    target.shape = tensor.shape;
    found.emplace_back(&tensor, std::move(target));
  }

  model_ = std::make_unique<Model>(model_config);
  for (const auto& info : model_->parameter_table()) {
    if (!seen.count(info.name)) {
      throw Error("the checkpoint has no tensor for '" + info.name + "' " + shape_text(info.shape) +
                  " (GPT-2 name: " + stored_name(family(), info.name) +
                  "); is it a GPT-2 checkpoint?");
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    if (a.second.compare_to_embed != b.second.compare_to_embed) return b.second.compare_to_embed;
    return a.first->begin < b.first->begin;
  });
  for (auto& [tensor, target] : found) {
    reads_.push_back({tensor->name, index.data_offset + std::uint64_t{tensor->begin},
                      index.data_offset + std::uint64_t{tensor->end}});
    targets_.push_back(std::move(target));
  }
}

void Gpt2Import::read(std::size_t index, std::span<const std::uint8_t> bytes,
                      std::uint64_t offset) {
  if (index >= reads_.size()) {
    throw Error("read index " + str(index) + " is out of range: " + str(reads_.size()) +
                " tensors");
  }
  const Gpt2Read& where = reads_[index];
  Target& target = targets_[index];
  const std::uint64_t total = where.end - where.begin;
  const std::size_t size = safetensors::dtype_size(target.dtype);
  if (offset != target.received || bytes.size() > total - offset || bytes.size() % size != 0 ||
      (target.transpose && bytes.size() != total)) {
    throw Error("tensor '" + where.name + "' needs its " + str(total) + " bytes " +
                (target.transpose ? "at once" : "in order, in whole values") + " from byte " +
                str(target.received) + ", got " + str(bytes.size()) + " at byte " + str(offset) +
                " (a truncated read?)");
  }
  const std::span<float> parameter = model_->parameter(target.parameter);
  const std::size_t first = std::size_t(offset / size);
  const std::span<float> part = parameter.subspan(first, bytes.size() / size);
  if (target.compare_to_embed) {
    scratch_.resize(part.size());
    safetensors::convert_to_f32(target.dtype, bytes, scratch_);
    for (std::size_t i = 0; i < part.size(); ++i) {
      if (!(scratch_[i] == part[i])) {
        throw Error("lm_head.weight differs from wte.weight (at value " + str(first + i) +
                    "): an untied output layer is not supported; GPT-2 ties them");
      }
    }
  } else if (target.transpose) {
    // stored [in, out] (Conv1D), ours [out, in]
    const std::size_t in = target.shape[0], out = target.shape[1];
    scratch_.resize(parameter.size());
    safetensors::convert_to_f32(target.dtype, bytes, scratch_);
    for (std::size_t i = 0; i < in; ++i) {
      for (std::size_t o = 0; o < out; ++o) parameter[o * in + i] = scratch_[i * out + o];
    }
  } else {
    safetensors::convert_to_f32(target.dtype, bytes, part);
  }
  for (std::size_t i = 0; i < part.size(); ++i) {
    if (!std::isfinite(part[i])) {
      throw Error("tensor '" + where.name + "' holds a non-finite value (NaN or infinity)");
    }
    if (std::abs(part[i]) > kMaxCheckpointWeight) {
      char value[32];
      std::snprintf(value, sizeof value, "%g", double(part[i]));
      throw Error("tensor '" + where.name + "' holds " + value + "; supported: |value| <= 1e+05 " +
                  "(a trained GPT-2's weights are far smaller; these could overflow float32)");
    }
  }
  target.received += bytes.size();
}

std::unique_ptr<Model> Gpt2Import::finish() {
  for (std::size_t i = 0; i < reads_.size(); ++i) {
    if (targets_[i].received != reads_[i].end - reads_[i].begin) {
      throw Error("tensor '" + reads_[i].name + "' was not read whole (" +
                  str(targets_[i].received) + " of " + str(reads_[i].end - reads_[i].begin) +
                  " bytes)");
    }
  }
  std::vector<float>().swap(scratch_);
  return std::move(model_);
}

std::unique_ptr<Model> load_gpt2_checkpoint(std::span<const std::uint8_t> file,
                                            const Gpt2Config& config) {
  Gpt2Import import(file, file.size(), config);
  for (std::size_t i = 0; i < import.reads().size(); ++i) {
    const Gpt2Read& where = import.reads()[i];
    const std::size_t total = std::size_t(where.end - where.begin);
    const std::size_t chunk = import.needs_whole(i) ? total : 65536;
    for (std::size_t at = 0; at < total; at += chunk) {  // every shape is non-empty
      import.read(i, file.subspan(std::size_t(where.begin) + at, std::min(chunk, total - at)), at);
    }
  }
  return import.finish();
}

}  // namespace attn
