// The free functions' bindings: lens.catalog, tokenize, readInAlphabet, numpyRandn, simd, memory.
#include "bindings/functions.hpp"

#include <malloc.h>

#include <span>
#include <string>
#include <vector>

#include "attention/layer/layer.hpp"
#include "attention/layer/step_text.hpp"
#include "attention/layer/steps.hpp"
#include "attention/model/checkpoint_import.hpp"
#include "attention/model/family.hpp"
#include "attention/model/model.hpp"
#include "attention/name_table.hpp"
#include "attention/ops/embedding.hpp"
#include "attention/ops/gelu.hpp"
#include "attention/ops/quantized_weights.hpp"
#include "attention/ops/simd.hpp"
#include "attention/parallel.hpp"
#include "attention/rng.hpp"
#include "attention/text/alphabet.hpp"
#include "attention/text/tokenizer.hpp"
#include "attention/train/tasks.hpp"
#include "attention/train/trainer.hpp"
#include "bindings/fields.hpp"

namespace attn::bindings {
namespace {

template <class Kind>
val name_list(std::span<const attn::NamedKind<Kind>> table) {
  return string_array(attn::table_names(table));
}

// numpyRandn's result, kept until the JS API has copied the view.
std::vector<double> randn_result;

}  // namespace

val catalog() {
  val steps = val::array();
  for (const attn::StepInfo& info : attn::step_catalog()) {
    val step = val::object();
    step.set("id", std::string(info.id));
    step.set("title", std::string(info.title));
    step.set("perHead", info.per_head);
    step.set("rows", std::string(info.rows));
    step.set("cols", std::string(info.cols));
    step.set("equation", attn::generic_equation(info.kind));
    val appears = val::null();
    val needs = val::null();
    if (info.appears != attn::StepCondition::Always) {
      appears = val::object();
      if (info.appears == attn::StepCondition::Cross) {
        appears.set("cross", true);
      } else {
        std::vector<const char*> names;
        for (auto kind : attn::condition_positional(info.appears)) {
          names.push_back(attn::positional_kind_name(kind));
        }
        appears.set("positional", string_array(names));
      }
      needs = val(std::string(attn::condition_text(info.appears)));
    }
    step.set("appearsWith", appears);
    step.set("needs", needs);
    steps.call<void>("push", step);
  }
  // Each options object's defaults and fields (name, kind, bounds) from its one field list.
  val defaults = val::object();
  defaults.set("layer", write_fields(attn::LayerConfig{}));
  defaults.set("forward", write_fields(attn::ForwardOptions{}));
  defaults.set("model", write_fields(attn::SmallModelOptions{}));
  defaults.set("trainer", write_fields(attn::TrainerConfig{}));
  val fields = val::object();
  fields.set("layer", describe_fields<attn::LayerConfig>());
  fields.set("forward", describe_fields<attn::ForwardOptions>());
  fields.set("model", describe_fields<attn::SmallModelOptions>());
  fields.set("trainer", describe_fields<attn::TrainerConfig>());
  val limits = val::object();
  limits.set("maxModelDim", attn::kMaxModelDim);
  limits.set("maxHeads", attn::kMaxHeads);
  limits.set("maxSequence", attn::kMaxSequence);
  limits.set("maxScoreValues", attn::kMaxScoreValues);
  limits.set("maxTraceValues", attn::kMaxTraceValues);
  limits.set("maxTokens", attn::kMaxTokens);
  limits.set("vocabularySize", attn::kVocabularySize);
  limits.set("maxModelVocab", attn::kMaxModelVocab);
  limits.set("maxModelContext", attn::kMaxModelContext);
  limits.set("maxModelDModel", attn::kMaxModelDModel);
  limits.set("maxModelLayers", attn::kMaxModelLayers);
  limits.set("maxCheckpointVocab", attn::kMaxCheckpointVocab);
  limits.set("maxCheckpointContext", attn::kMaxCheckpointContext);
  limits.set("maxCheckpointDModel", attn::kMaxCheckpointDModel);
  limits.set("maxCheckpointLayers", attn::kMaxCheckpointLayers);
  limits.set("maxCheckpointParameterBytes", double(attn::kMaxCheckpointParameterBytes));
  val out = val::object();
  out.set("steps", steps);
  out.set("fields", fields);
  out.set("positional", name_list(attn::positional_kinds()));
  out.set("masks", name_list(attn::mask_kinds()));
  out.set("tokenizers", name_list(attn::tokenizer_kinds()));
  out.set("gelu", name_list(attn::gelu_kinds()));
  out.set("tasks", name_list(attn::task_kinds()));
  // The checkpoint families the core reads (the registry's order) and the bytes a parameter
  // stored in each dtype takes in the tab.
  out.set("families", array_of(attn::families(), [](const attn::FamilyDescription* family) {
            val entry = val::object();
            entry.set("name", std::string(family->family));
            entry.set("modelType", std::string(family->model_type));
            entry.set("displayName", std::string(family->display_name));
            return entry;
          }));
  val bytes = val::object();
  for (const auto dtype : {attn::safetensors::DType::F32, attn::safetensors::DType::F64,
                           attn::safetensors::DType::F16, attn::safetensors::DType::BF16}) {
    bytes.set(attn::safetensors::dtype_name(dtype), double(attn::bytes_in_memory(dtype)));
  }
  // GGUF's quantized types the core keeps as stored (quantized_weights.hpp).
  for (const attn::GgmlType type : attn::kKeptQuantizedTypes) {
    bytes.set(attn::ggml_type_name(type), attn::quantized_bytes_per_value(type));
  }
  out.set("parameterBytes", bytes);
  out.set("unknownCharacters", name_list(attn::unknown_character_policies()));
  out.set("defaults", defaults);
  out.set("limits", limits);
  return out;
}

val numpyRandn(std::uint32_t seed, std::size_t count) {
  return guarded([&] {
    randn_result.assign(count, 0.0);
    attn::NumpyRandomState(seed).fill_randn(randn_result);
    return view_of(randn_result.data(), randn_result.size());
  });
}

val tokenize(const std::string& text, const std::string& mode) {
  return guarded([&] {
    const auto tokens = attn::tokenize(text, attn::parse_tokenizer_kind(mode));
    val texts = val::array();
    val ids = val::array();
    for (const auto& token : tokens) {
      texts.call<void>("push", token.text);
      ids.call<void>("push", attn::token_id(token.text, attn::kVocabularySize));
    }
    val result = val::object();
    result.set("tokens", texts);
    result.set("ids", ids);
    return result;
  });
}

val readInAlphabet(const std::string& text, const std::string& alphabet, const std::string& owner,
                   const std::string& unknown) {
  return guarded([&] {
    const attn::AlphabetText read =
        attn::read_in_alphabet(text, alphabet, owner, attn::parse_unknown_characters(unknown));
    val out = val::object();
    out.set("ids", val::global("Int32Array").new_(view_of(read.ids.data(), read.ids.size())));
    out.set("tokens", string_array(read.characters));
    out.set("mapped", array_of(read.mapped, [](const auto& m) {
              val entry = val::object();
              entry.set("position", m.position);
              entry.set("typed", m.typed);
              entry.set("read", m.read);
              entry.set("how", std::string(attn::name_of(attn::character_mappings(), m.how)));
              return entry;
            }));
    out.set("note", read.note);
    return out;
  });
}

std::string simdArch() {
  return attn::simd::arch_name();
}

val setThreads(std::size_t count) {
  return guarded([&] {
    attn::set_thread_count(count);
    return val::undefined();
  });
}

std::size_t threadCount() {
  return attn::thread_count();
}

std::size_t heapInUse() {
  return mallinfo().uordblks;
}

}  // namespace attn::bindings
