// Reading a Hugging Face checkpoint into a Model by its family's description, see
// checkpoint_import.hpp.
#include "attention/model/checkpoint_import.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

#include "attention/error.hpp"
#include "attention/message_text.hpp"
#include "attention/model/family.hpp"
#include "attention/model/gguf_checkpoint.hpp"
#include "attention/ops/dequantize.hpp"
#include "attention/ops/quantized_weights.hpp"

namespace attn {

namespace {

std::string str(std::uint64_t value) {
  return std::to_string(value);
}

std::string strip_prefix(const FamilyDescription& family, const std::string& name) {
  const std::string_view prefix = family.name_prefix;
  return !prefix.empty() && name.starts_with(prefix) ? name.substr(prefix.size()) : name;
}

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

// Another family's checkpoint, recognised by a tensor name (for a clear refusal): one of ours
// (its display name), or a family the core does not read.
std::optional<std::string> other_family(const FamilyDescription& family, const std::string& name) {
  for (const FamilyDescription* other : families()) {
    if (other->tensors.front().stored == family.tensors.front().stored) continue;  // same names
    if (match_tensor(*other, strip_prefix(*other, name))) {
      return std::string(other->display_name);
    }
  }
  if (name.starts_with("bert.") || contains(name, "embeddings.word_embeddings") ||
      contains(name, "attention.self.query"))
    return "BERT";
  if (contains(name, "encoder.block.") || contains(name, "decoder.block.")) return "T5";
  if (contains(name, "model.decoder.layers.")) return "OPT/BART";
  return std::nullopt;
}

// Where a row block of our fused parameter starts, in values.
std::size_t block_start(RowBlock rows, const AttentionShape& shape, std::size_t mlp_width,
                        std::size_t in) {
  switch (rows) {
    case RowBlock::Whole:
    case RowBlock::Query:
    case RowBlock::Gate:
      return 0;
    case RowBlock::Key:
      return shape.q_width() * in;
    case RowBlock::Value:
      return (shape.q_width() + shape.kv_width()) * in;
    case RowBlock::Up:
      return mlp_width * in;
  }
  return 0;
}

}  // namespace

std::size_t CheckpointImport::Target::destination(std::size_t index) const {
  if (rope_head_dim != 0) {
    // stored row h·head_dim + 2·j + s holds the original row h·head_dim + s·head_dim/2 + j
    // (llama.cpp's LlamaModel.permute, undone)
    const std::size_t row_length = shape.size() == 2 ? shape[1] : 1;
    const std::size_t row = index / row_length, column = index % row_length;
    const std::size_t head = row / rope_head_dim, within = row % rope_head_dim;
    const std::size_t original =
        head * rope_head_dim + (within % 2) * (rope_head_dim / 2) + within / 2;
    return first_value + original * row_length + column;
  }
  if (per_head == 0) return first_value + index;
  // stored row r = head·3·head_dim + slot·head_dim + c (slot 0 q, 1 k, 2 v) → our row slot·d +
  // head·head_dim + c (d = heads·head_dim = rows / 3)
  const std::size_t row_length = shape.size() == 2 ? shape[1] : 1;
  const std::size_t row = index / row_length, column = index % row_length;
  const std::size_t head = row / (3 * per_head), within = row % (3 * per_head);
  const std::size_t slot = within / per_head, c = within % per_head;
  const std::size_t ours = slot * (shape[0] / 3) + head * per_head + c;
  return first_value + ours * row_length + column;
}

DefaultTokenizer default_tokenizer(const FamilyDescription& family, std::size_t vocab) {
  if (&family == &gpt2_family() && vocab >= kGpt2TokenizerVocab) return {true, ""};
  if (&family != &gpt2_family()) {
    return {false, "this " + std::string(family.display_name) +
                       " checkpoint needs its own tokenizer: pass loadCheckpoint its "
                       "tokenizer.json"};
  }
  return {false, "this checkpoint has " + str(vocab) +
                     " token ids, fewer than GPT-2's tokenizer's " + str(kGpt2TokenizerVocab) +
                     ": pass loadCheckpoint a tokenizer (tokenizer.json, or { vocab, merges })"};
}

CheckpointImport::CheckpointImport(const std::vector<std::span<const std::uint8_t>>& heads,
                                   const std::vector<std::uint64_t>& file_sizes,
                                   const CheckpointConfig& config)
    : CheckpointImport(config.family == nullptr ? std::vector<CheckpointFile>{}
                                                : describe_checkpoint_files(heads, file_sizes),
                       config) {}

std::size_t CheckpointImport::unit_bytes(const Target& target) {
  return target.blocks ? ggml_type_info(*target.blocks).block_bytes
                       : safetensors::dtype_size(target.dtype);
}

CheckpointImport::CheckpointImport(const std::vector<CheckpointFile>& files,
                                   const CheckpointConfig& config, bool keep_quantized)
    : family_(config.family), names_(config.family) {
  if (family_ == nullptr) throw Error("the checkpoint's config names no family");
  if (files.empty()) throw Error("the checkpoint needs at least one file");
  // A GGUF file names its tensors as llama.cpp does: matched by the family's GGUF names.
  const bool gguf = files.front().format == CheckpointFormat::Gguf;
  if (gguf) {
    if (files.size() != 1) throw Error("a GGUF checkpoint is one file; got " + str(files.size()));
    if (family_->gguf.architecture.empty()) {
      throw Error("the " + std::string(family_->display_name) +
                  " family is not read from GGUF files; supported: " + gguf_architecture_names());
    }
    gguf_names_ = gguf_view(*family_);
    names_ = &*gguf_names_;
  }
  const FamilyDescription& family = *names_;
  struct FileTensors {
    const std::vector<StoredTensor>& tensors;
  };
  std::vector<FileTensors> indexes;
  for (const CheckpointFile& file : files) indexes.push_back({file.tensors});
  const auto in_file = [&](std::size_t f, const std::string& name) {
    return files.size() == 1 ? "'" + name + "'" : "'" + name + "' (shard " + str(f + 1) + ")";
  };
  std::size_t tensors = 0;
  for (const auto& index : indexes) tensors += index.tensors.size();
  if (tensors == 0) throw Error("the checkpoint has no tensors; " + std::string(family.supported));
  for (const auto& index : indexes) {
    for (const auto& tensor : index.tensors) {
      const std::string name = strip_prefix(family, tensor.name);
      if (gguf || match_tensor(family, name) || is_ignored(family, name)) continue;
      if (const auto other = other_family(family, tensor.name)) {
        throw Error("this looks like a " + *other + " checkpoint (tensor '" +
                    tensor.name.substr(0, 80) + "'); " + std::string(family.supported));
      }
    }
  }
  const ModelConfig& mc = config.model;
  const AttentionShape shape = attention_shape(mc);
  const FamilySizes sizes{mc.d_model,       mc.vocab,      mc.context,    shape.q_width(),
                          shape.kv_width(), mlp_width(mc), shape.head_dim};

  // Layers present in the files, to name a disagreement with the config.
  std::size_t file_layers = 0;
  for (const auto& index : indexes) {
    for (const auto& tensor : index.tensors) {
      if (const auto layer = layer_of(family, strip_prefix(family, tensor.name))) {
        file_layers = std::max(file_layers, *layer + 1);
      }
    }
  }
  if (file_layers != mc.layers) {
    std::string layer;  // "h." or "model.layers.": the first layer pattern's start
    for (const FamilyTensor& tensor : family.tensors) {
      if (const std::size_t at = tensor.stored.find("{i}"); at != std::string::npos) {
        layer = tensor.stored.substr(0, at);
        break;
      }
    }
    throw Error("config.json says " + std::string(family.size_keys.layers) + " " + str(mc.layers) +
                " but the checkpoint has " + str(file_layers) + " layers (" + layer + "0 … " +
                layer + str(file_layers ? file_layers - 1 : 0) + ")");
  }
  const FamilySizeKeys& keys = family.size_keys;
  const std::string sizes_text =
      std::string(keys.d_model) + " " + str(mc.d_model) + ", " + std::string(keys.vocab) + " " +
      str(mc.vocab) +
      (mc.positional == PositionalKind::Learned
           ? ", " + std::string(keys.context) + " " + str(mc.context)
           : ", " + std::string(keys.heads) + " " + str(shape.heads) + " of head_dim " +
                 str(shape.head_dim) + ", num_key_value_heads " + str(shape.kv_heads) +
                 ", intermediate_size " + str(sizes.mlp_width));
  const std::vector<ParameterInfo> table = parameter_layout(mc);
  std::map<std::string, std::string> seen;  // our parameter's block → the file's name
  struct Found {
    std::size_t file;
    const StoredTensor* tensor;
    Target target;
  };
  std::vector<Found> found;
  // GGUF: the embedding's storage type (a tied copy quantized otherwise is not compared).
  std::optional<GgmlType> embedding_type;
  for (const auto& tensor : indexes.front().tensors) {
    if (tensor.name == stored_name(family, "embed.weight")) embedding_type = tensor.ggml_type;
  }
  const auto block_key = [](const std::string& ours, RowBlock rows) {
    return ours + "#" + str(std::uint64_t(rows));
  };
  for (std::size_t f = 0; f < indexes.size(); ++f) {
    for (const auto& tensor : indexes[f].tensors) {
      const std::string name = strip_prefix(family, tensor.name);
      if (is_ignored(family, name)) continue;
      // Llama 3's RoPE scaling as llama.cpp stores it: one F32 factor per rotated pair, read into
      // every layer's RoPE frequencies when the model is finished.
      if (gguf && family_->gguf.rope_factors && tensor.name == kRopeFactorsTensor) {
        const std::size_t pairs = mc.blocks.front().rope.rotated(shape.head_dim) / 2;
        if (tensor.ggml_type != GgmlType::F32 || tensor.shape != std::vector{pairs}) {
          throw Error("the GGUF file's " + tensor.name + " is " + tensor.dtype_name + " " +
                      shape_text(tensor.shape) + "; supported: F32 [" + str(pairs) +
                      "] (one factor per rotated pair of a head's " + str(shape.head_dim) +
                      " dimensions, as llama.cpp's converter writes Llama 3's RoPE scaling)");
        }
        if (!seen.emplace(tensor.name, tensor.name).second) {
          throw Error("the checkpoint has '" + tensor.name + "' twice");
        }
        Target target;
        target.rope_factors = true;
        target.shape = tensor.shape;
        found.push_back({f, &tensor, std::move(target)});
        continue;
      }
      const auto match = match_tensor(family, name);
      if (!match) {
        throw Error("the checkpoint's tensor " + in_file(f, tensor.name.substr(0, 80)) + " " +
                    shape_text(tensor.shape) + " is not a " + std::string(family.display_name) +
                    " tensor; " + std::string(family.supported));
      }
      if (match->layer && *match->layer >= mc.layers) {
        throw Error("tensor '" + tensor.name + "' is in a layer past " +
                    std::string(family.size_keys.layers) + " " + str(mc.layers));
      }
      const StoredLayout layout = match->tensor->layout;
      const bool tied_copy =
          layout == StoredLayout::TiedCopy || (layout == StoredLayout::Unembedding && mc.tied);
      const std::string ours = tied_copy ? "embed.weight" : match->ours;
      bool known = false;
      for (const auto& info : table) known = known || info.name == ours;
      if (!known) {
        throw Error("the checkpoint has tensor '" + tensor.name.substr(0, 80) +
                    "', which this config.json has no place for (its biases or tied "
                    "embeddings say otherwise)");
      }
      const std::vector<std::size_t> stored_shape = shape_of(match->tensor->shape, sizes);
      if (tensor.shape != stored_shape) {
        throw Error("the checkpoint's tensor '" + tensor.name + "' has shape " +
                    shape_text(tensor.shape) + ", config.json (" + sizes_text + ") needs " +
                    shape_text(stored_shape));
      }
      // GGUF's quantized blocks: kept, or dequantized to float as they are read.
      const bool quantized = tensor.ggml_type && !tensor.dtype && can_dequantize(*tensor.ggml_type);
      if ((!tensor.dtype && !quantized) || tensor.dtype == safetensors::DType::U8 ||
          tensor.dtype == safetensors::DType::Bool) {
        throw Error("the checkpoint's tensor '" + tensor.name + "' is " + tensor.dtype_name +
                    (gguf ? std::string("; supported in GGUF files: ") + dequantizable_type_names()
                          : std::string("; supported: F32, F16, BF16 (and F64)")));
      }
      const std::string key =
          tied_copy ? std::string(match->tensor->stored) : block_key(ours, match->tensor->rows);
      if (!seen.emplace(key, tensor.name).second) {
        throw Error(
            "the checkpoint has both '" + seen[key] + "' and '" + tensor.name +
            "' (the same tensor twice" +
            (family.name_prefix.empty()
                 ? std::string(")")
                 : ", with and without the " + std::string(family.name_prefix) + " prefix)"));
      }
      // llama.cpp's GPT-2 output.weight is token_embd's copy; quantized to another type it
      // cannot equal it, and the model ties them: left unread.
      if (gguf && tied_copy && tensor.ggml_type != embedding_type) continue;
      Target target;
      target.parameter = ours;
      target.first_value = tied_copy ? 0
                                     : block_start(match->tensor->rows, shape, mlp_width(mc),
                                                   stored_shape.size() == 2 ? stored_shape[1] : 1);
      target.transpose = layout == StoredLayout::Transposed;
      if (layout == StoredLayout::PerHeadQkv) target.per_head = shape.head_dim;
      if (layout == StoredLayout::RopeInterleaved) target.rope_head_dim = shape.head_dim;
      target.minus_one = layout == StoredLayout::PlusOne;
      target.compare_to_embed = tied_copy;
      target.dtype = tensor.dtype.value_or(safetensors::DType::F32);
      if (quantized) target.blocks = tensor.ggml_type;
      target.shape = tensor.shape;
      if (tensor.source) target.zip = Target::Zip{*tensor.entry, *tensor.source, {}, {}, 0};
      found.push_back({f, &tensor, std::move(target)});
    }
  }
  // A weight matrix whose stored tensors are all F16 (or all BF16) stays in that form, one whose
  // tensors are all GGUF quantized blocks keeps them (each tensor its rows, of its own type); a
  // GGUF file's F32, F16 and BF16 matrices are kept as blocks too (of one value: QuantizedMatrix's
  // panel layout, which the kernels read where it is, so the first forward packs no copy);
  // the memory that takes is known from the headers alone.
  const auto kept_type = [&](const Target& t) -> std::optional<GgmlType> {
    if (t.blocks) return can_keep_quantized(*t.blocks) ? t.blocks : std::nullopt;
    if (gguf && t.dtype == safetensors::DType::F32) return GgmlType::F32;
    if (gguf && t.dtype == safetensors::DType::F16) return GgmlType::F16;
    if (gguf && t.dtype == safetensors::DType::BF16) return GgmlType::BF16;
    return std::nullopt;
  };
  std::vector<std::pair<std::string, HalfKind>> kept_half;
  std::vector<KeptQuantized> kept_quantized;
  std::uint64_t bytes = 0, parameters = 0;
  for (const auto& info : table) {
    std::optional<HalfKind> kind;
    std::optional<KeptQuantized> blocks;
    std::uint64_t blocks_bytes = 0;
    if (info.shape.size() == 2 && info.name != "pos.weight") {
      bool any = false, all_f16 = true, all_bf16 = true, all_blocks = true;
      std::vector<std::pair<std::size_t, const Target*>> parts;  // (first row, target)
      for (const Found& each : found) {
        if (each.target.parameter != info.name || each.target.compare_to_embed) continue;
        any = true;
        all_f16 = all_f16 && each.target.dtype == safetensors::DType::F16 && !each.target.blocks;
        all_bf16 = all_bf16 && each.target.dtype == safetensors::DType::BF16 && !each.target.blocks;
        all_blocks = all_blocks && kept_type(each.target) && !each.target.transpose &&
                     each.target.shape.size() == 2 && each.target.shape[1] == info.shape[1];
        parts.emplace_back(each.target.first_value / info.shape[1], &each.target);
      }
      all_f16 = all_f16 && any;
      all_bf16 = all_bf16 && any;
      if (all_bf16) kind = HalfKind::BF16;
      if (all_f16) kind = HalfKind::F16;
      if (any && all_blocks && keep_quantized) {
        std::sort(parts.begin(), parts.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        KeptQuantized kept{info.name, {}};
        std::size_t row = 0;
        for (const auto& [first_row, target] : parts) {
          if (first_row != row) break;  // not a run of row blocks: left to the checks below
          const GgmlType type = *kept_type(*target);
          kept.parts.emplace_back(type, target->shape[0]);
          row += target->shape[0];
          blocks_bytes += QuantizedMatrix::bytes_for(type, target->shape[0], info.shape[1]);
        }
        if (row == info.shape[0]) blocks = std::move(kept);
      }
    }
    if (kind && !blocks) kept_half.emplace_back(info.name, *kind);
    parameters += info.size;
    if (blocks) {
      bytes += blocks_bytes;
      kept_quantized.push_back(std::move(*blocks));
      continue;
    }
    bytes += std::uint64_t{info.size} *
             (kind ? bytes_in_memory(*kind == HalfKind::BF16 ? safetensors::DType::BF16
                                                             : safetensors::DType::F16)
                   : bytes_in_memory(safetensors::DType::F32));
  }
  if (bytes > kMaxCheckpointParameterBytes) {
    throw Error(
        "this checkpoint is too large for the tab: " + str(parameters) + " parameters need " +
        str(bytes / 1000000) + " MB (F16 and BF16 weights kept " + "2-byte" +
        (gguf ? std::string(", GGUF's quantized weights in their blocks") : std::string()) +
        ", the others float32), the limit is " + str(kMaxCheckpointParameterBytes / 1000000) +
        " MB (gpt2, SmolLM2, Qwen2.5-0.5B and TinyLlama-1.1B fit, and models up to about "
        "5 B parameters in Q4_K_M; gpt2-xl in F32 and models of 2 B parameters and more "
        "in BF16 do not)");
  }
  // Every block of every parameter: the blocks a fused parameter is stored in, or it whole.
  for (const auto& info : table) {
    bool fused = false;
    for (const FamilyTensor& tensor : family.tensors) {
      if (tensor.rows == RowBlock::Whole || tensor.layout == StoredLayout::TiedCopy) continue;
      const auto match = match_tensor(family, stored_name(family, info.name, tensor.rows));
      if (!match || match->ours != info.name || match->tensor != &tensor) continue;
      fused = true;
      if (!seen.count(block_key(info.name, tensor.rows))) {
        throw Error("the checkpoint has no tensor '" + stored_name(family, info.name, tensor.rows) +
                    "', which config.json says it has (" + info.name + " " +
                    shape_text(info.shape) + ")");
      }
    }
    if (!fused && !seen.count(block_key(info.name, RowBlock::Whole))) {
      throw Error("the checkpoint has no tensor for '" + info.name + "' " + shape_text(info.shape) +
                  " (" + std::string(family.display_name) +
                  " name: " + stored_name(family, info.name) + "); is it a " +
                  std::string(family.display_name) + " checkpoint?");
    }
  }
  for (Found& each : found) {
    for (const auto& [name, kind] : kept_half) {
      if (name == each.target.parameter && !each.target.compare_to_embed) each.target.half = kind;
    }
    for (const KeptQuantized& kept : kept_quantized) {
      if (kept.name == each.target.parameter && !each.target.compare_to_embed) {
        each.target.keep_blocks = true;
      }
    }
  }
  for (const Found& each : found) {
    if (each.target.rope_factors) rope_factors_.assign(each.target.shape.front(), 0.0f);
  }
  model_ = std::make_unique<Model>(mc, kept_half, kept_quantized);
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    if (a.target.compare_to_embed != b.target.compare_to_embed) return b.target.compare_to_embed;
    if (a.file != b.file) return a.file < b.file;
    return a.tensor->begin < b.tensor->begin;
  });
  for (auto& each : found) {
    reads_.push_back({each.file, each.tensor->name, each.tensor->begin, each.tensor->end,
                      each.tensor->dtype_name});
    targets_.push_back(std::move(each.target));
  }
}

void CheckpointImport::read(std::size_t index, std::span<const std::uint8_t> bytes,
                            std::uint64_t offset) {
  if (index >= reads_.size()) {
    throw Error("read index " + str(index) + " is out of range: " + str(reads_.size()) +
                " tensors");
  }
  const CheckpointRead& where = reads_[index];
  Target& target = targets_[index];
  if (target.zip) {
    read_zip(index, bytes, offset);
    return;
  }
  const std::uint64_t total = where.end - where.begin;
  if (offset != target.received || bytes.size() > total - offset ||
      (target.transpose && bytes.size() != total)) {
    throw Error("tensor '" + where.name + "' needs its " + str(total) + " bytes " +
                (target.transpose ? "at once" : "in order") + " from byte " + str(target.received) +
                ", got " + str(bytes.size()) + " at byte " + str(offset) + " (a truncated read?)");
  }
  target.received += bytes.size();
  // Whole values (or quantized blocks) only: one split between chunks waits in `pending`.
  const std::size_t unit = unit_bytes(target);
  std::uint64_t at = offset - target.pending.size();  // where the bytes to store start
  if (!target.pending.empty()) {
    const std::size_t take = std::min(unit - target.pending.size(), bytes.size());
    target.pending.insert(target.pending.end(), bytes.begin(),
                          bytes.begin() + std::ptrdiff_t(take));
    bytes = bytes.subspan(take);
    if (target.pending.size() < unit) return;
    store(index, target.pending, at);
    at += unit;
    target.pending.clear();
  }
  const std::size_t whole = bytes.size() / unit * unit;
  if (whole > 0) store(index, bytes.first(whole), at);
  target.pending.assign(bytes.begin() + std::ptrdiff_t(whole), bytes.end());
}

void CheckpointImport::read_zip(std::size_t index, std::span<const std::uint8_t> bytes,
                                std::uint64_t offset) {
  const CheckpointRead& where = reads_[index];
  Target& target = targets_[index];
  Target::Zip& source = *target.zip;
  const std::uint64_t total = where.end - where.begin;
  const bool whole = needs_whole(index);
  if (offset != target.received || bytes.size() > total - offset ||
      (whole && bytes.size() != total)) {
    throw Error("tensor '" + where.name + "' needs its storage's " + str(total) + " bytes " +
                (whole ? "at once" : "in order") + " from byte " + str(target.received) + ", got " +
                str(bytes.size()) + " at byte " + str(offset) + " (a truncated read?)");
  }
  target.received += bytes.size();
  const torch_checkpoint::TensorSource& tensor = source.tensor;
  if (whole) {  // the storage's whole entry: its values gathered row-major
    const std::uint64_t start = zip::data_start(source.entry, bytes);
    const auto data = bytes.subspan(std::size_t(start), std::size_t(source.entry.size));
    gathered_.resize(std::size_t(tensor.value_bytes()));
    torch_checkpoint::gather_raw(tensor, data, 0, gathered_);
    store(index, gathered_, 0);
    source.stored = gathered_.size();
    std::vector<std::uint8_t>().swap(gathered_);
    return;
  }
  // The local header first (it may arrive over several chunks), then the data.
  constexpr std::size_t kLocalHeaderBytes = 30;
  std::uint64_t at = offset;  // where bytes[0] is in the entry's span
  while (!source.data_start) {
    std::size_t need = kLocalHeaderBytes;
    if (source.pending.size() >= need) {
      const bool signature = source.pending[0] == 'P' && source.pending[1] == 'K' &&
                             source.pending[2] == 3 && source.pending[3] == 4;
      need = signature ? zip::local_header_size(source.pending) : source.pending.size();
    }
    if (source.pending.size() >= need) {  // data_start checks the header against the directory
      source.data_start = zip::data_start(source.entry, source.pending);
      source.pending.clear();
      break;
    }
    if (bytes.empty()) return;
    const std::size_t take = std::min(need - source.pending.size(), bytes.size());
    source.pending.insert(source.pending.end(), bytes.begin(),
                          bytes.begin() + std::ptrdiff_t(take));
    bytes = bytes.subspan(take);
    at += take;
  }
  // The tensor's values are bytes [byte_begin, byte_end) of the data; the rest is skipped.
  const std::uint64_t position = at - *source.data_start;  // of bytes[0] in the data
  const std::uint64_t from = std::max(position, tensor.byte_begin);
  const std::uint64_t to = std::min(position + bytes.size(), tensor.byte_end);
  if (from >= to) return;
  auto piece = bytes.subspan(std::size_t(from - position), std::size_t(to - from));
  const std::size_t size = safetensors::dtype_size(target.dtype);
  if (!source.pending.empty()) {  // a value split between chunks
    const std::size_t take = std::min(size - source.pending.size(), piece.size());
    source.pending.insert(source.pending.end(), piece.begin(),
                          piece.begin() + std::ptrdiff_t(take));
    piece = piece.subspan(take);
    if (source.pending.size() < size) return;
    store(index, source.pending, source.stored);
    source.stored += size;
    source.pending.clear();
  }
  const std::size_t values = piece.size() / size * size;
  if (values > 0) {
    store(index, piece.first(values), source.stored);
    source.stored += values;
  }
  source.pending.assign(piece.begin() + std::ptrdiff_t(values), piece.end());
}

void CheckpointImport::store(std::size_t index, std::span<const std::uint8_t> bytes,
                             std::uint64_t offset) {
  const CheckpointRead& where = reads_[index];
  Target& target = targets_[index];
  const std::size_t size = unit_bytes(target);
  const std::size_t per_unit = target.blocks ? ggml_type_info(*target.blocks).block_values : 1;
  const std::size_t first = std::size_t(offset / size) * per_unit;
  const std::size_t count = bytes.size() / size * per_unit;
  scratch_.resize(count);  // the chunk as float: checked, compared or stored
  if (target.blocks) {
    dequantize(*target.blocks, bytes, scratch_);
  } else {
    safetensors::convert_to_f32(target.dtype, bytes, scratch_);
  }
  if (target.rope_factors) {
    // θ_i / factor_i: each factor a finite positive number (the converter's 1 … factor)
    for (std::size_t i = 0; i < count; ++i) {
      if (!(std::isfinite(scratch_[i]) && scratch_[i] > 0.0f)) {
        char value[32];
        std::snprintf(value, sizeof value, "%g", double(scratch_[i]));
        throw Error("the GGUF file's " + where.name + " holds " + value + " (factor " +
                    str(first + i) +
                    "); RoPE's factors must be finite and above 0 (θ is divided by them)");
      }
      rope_factors_[first + i] = scratch_[i];
    }
    return;
  }
  if (target.minus_one) {  // Gemma's norm weights, stored 1 + w by llama.cpp's converter
    for (std::size_t i = 0; i < count; ++i) scratch_[i] -= 1.0f;
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (!std::isfinite(scratch_[i])) {
      throw Error("tensor '" + where.name + "' holds a non-finite value (NaN or infinity)");
    }
    if (std::abs(scratch_[i]) > kMaxCheckpointWeight) {
      char value[32];
      std::snprintf(value, sizeof value, "%g", double(scratch_[i]));
      throw Error("tensor '" + where.name + "' holds " + value + "; supported: |value| <= 1e+05 " +
                  "(a trained model's weights are far smaller; these could overflow float32)");
    }
  }
  if (target.compare_to_embed) {
    embed_scratch_.resize(count);
    model_->stored_weights("embed.weight").rows(first, count, 1, embed_scratch_.data());
    for (std::size_t i = 0; i < count; ++i) {
      if (!(scratch_[i] == embed_scratch_[i])) {
        throw Error(where.name + " differs from " + stored_name(*names_, "embed.weight") +
                    " (at value " + str(first + i) + "): " +
                    (family_ == &gpt2_family()
                         ? "an untied output layer is not supported; GPT-2 ties them"
                         : "config.json's tie_word_embeddings is true, so they must be equal"));
      }
    }
  } else if (target.keep_blocks) {
    // the blocks as they are, each into its row of the parameter (RoPE's and per-head row orders
    // move whole rows: a block stays whole)
    QuantizedWeights& weights = model_->quantized_parameter(target.parameter);
    const std::size_t blocks = bytes.size() / size;
    for (std::size_t i = 0; i < blocks; ++i) {
      const std::size_t to = target.destination(first + i * per_unit);
      const std::size_t row = to / weights.cols, block = to % weights.cols / per_unit;
      QuantizedWeights::Part& part = weights.part_of(row);
      part.matrix.set_block(row - part.first_row, block, bytes.data() + i * size);
    }
  } else if (target.half) {
    // the stored 2-byte values (little-endian), as they are
    const std::span<std::uint16_t> parameter = model_->half_parameter(target.parameter);
    const auto value = [&](std::size_t i) {
      return std::uint16_t(bytes[2 * i] | (bytes[2 * i + 1] << 8));
    };
    if (target.transpose) {  // stored [in, out] (Conv1D), ours [out, in]
      const std::size_t in = target.shape[0], out = target.shape[1];
      for (std::size_t i = 0; i < in; ++i) {
        for (std::size_t o = 0; o < out; ++o) parameter[o * in + i] = value(i * out + o);
      }
    } else if (target.per_head != 0 || target.rope_head_dim != 0) {
      for (std::size_t i = 0; i < count; ++i) parameter[target.destination(first + i)] = value(i);
    } else {
      std::uint16_t* to = parameter.data() + target.first_value + first;
      for (std::size_t i = 0; i < count; ++i) to[i] = value(i);
    }
  } else {
    const std::span<float> parameter = model_->parameter(target.parameter);
    if (target.transpose) {  // stored [in, out] (Conv1D), ours [out, in]
      const std::size_t in = target.shape[0], out = target.shape[1];
      for (std::size_t i = 0; i < in; ++i) {
        for (std::size_t o = 0; o < out; ++o) parameter[o * in + i] = scratch_[i * out + o];
      }
    } else if (target.per_head != 0 || target.rope_head_dim != 0) {
      for (std::size_t i = 0; i < count; ++i)
        parameter[target.destination(first + i)] = scratch_[i];
    } else {
      std::copy(scratch_.begin(), scratch_.end(),
                parameter.begin() + std::ptrdiff_t(target.first_value + first));
    }
  }
}

std::unique_ptr<Model> CheckpointImport::finish() {
  for (std::size_t i = 0; i < reads_.size(); ++i) {
    const Target& target = targets_[i];
    if (target.received != reads_[i].end - reads_[i].begin ||
        (target.zip && target.zip->stored != target.zip->tensor.value_bytes())) {
      throw Error("tensor '" + reads_[i].name + "' was not read whole (" +
                  str(targets_[i].received) + " of " + str(reads_[i].end - reads_[i].begin) +
                  " bytes)");
    }
  }
  std::vector<float>().swap(scratch_);
  std::vector<float>().swap(embed_scratch_);
  if (!rope_factors_.empty()) {
    // every RoPE layer's θ_i = base^(−2i/r) / factor_i (ggml_rope_ext's freq_factors)
    const ModelConfig& config = model_->config();
    const std::size_t rotated =
        config.blocks.front().rope.rotated(attention_shape(config).head_dim);
    std::vector<double> frequencies(rope_factors_.size());
    for (std::size_t i = 0; i < frequencies.size(); ++i) {
      frequencies[i] =
          rope_frequency(i, rotated, config.blocks.front().rope.base) / double(rope_factors_[i]);
    }
    model_->set_rope_frequencies(frequencies, RopeScaling::Llama3);
  }
  return std::move(model_);
}

CheckpointConfig checkpoint_config_for(const std::vector<CheckpointFile>& files,
                                       const std::optional<std::string>& config_json) {
  const bool gguf = !files.empty() && files.front().format == CheckpointFormat::Gguf;
  if (gguf && config_json) {
    throw Error(
        "this is a GGUF file, whose metadata holds its config: give loadCheckpoint no config");
  }
  if (gguf) return gguf_checkpoint_config(files.front());
  if (!config_json) {
    throw Error(
        "loadCheckpoint needs config (config.json's text or the parsed object) for a "
        ".safetensors or pytorch_model.bin file; only a GGUF file carries its own");
  }
  return checkpoint_config(ConfigJson(*config_json));
}

namespace {

std::unique_ptr<Model> load_described(const std::vector<std::span<const std::uint8_t>>& files,
                                      CheckpointImport& import) {
  for (std::size_t i = 0; i < import.reads().size(); ++i) {
    const CheckpointRead& where = import.reads()[i];
    const auto file = files[where.file];
    const std::size_t total = std::size_t(where.end - where.begin);
    const std::size_t chunk = import.needs_whole(i) ? total : 65536;
    for (std::size_t at = 0; at < total; at += chunk) {  // every shape is non-empty
      import.read(i, file.subspan(std::size_t(where.begin) + at, std::min(chunk, total - at)), at);
    }
  }
  return import.finish();
}

}  // namespace

std::unique_ptr<Model> load_checkpoint(const std::vector<std::span<const std::uint8_t>>& files,
                                       const CheckpointConfig& config) {
  std::vector<std::uint64_t> sizes;
  for (const auto& file : files) sizes.push_back(file.size());
  CheckpointImport import(files, sizes, config);
  return load_described(files, import);
}

std::unique_ptr<Model> load_gguf_checkpoint(std::span<const std::uint8_t> file,
                                            bool keep_quantized) {
  const std::vector<CheckpointFile> described = describe_checkpoint_files({file}, {file.size()});
  CheckpointImport import(described, checkpoint_config_for(described, std::nullopt),
                          keep_quantized);
  return load_described({file}, import);
}

}  // namespace attn
