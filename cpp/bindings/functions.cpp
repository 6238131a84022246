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
#include "attention/model/model.hpp"
#include "attention/name_table.hpp"
#include "attention/ops/embedding.hpp"
#include "attention/ops/gelu.hpp"
#include "attention/ops/simd.hpp"
#include "attention/parallel.hpp"
#include "attention/rng.hpp"
#include "attention/text/alphabet.hpp"
#include "attention/text/tokenizer.hpp"
#include "attention/train/tasks.hpp"
#include "attention/train/trainer.hpp"

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
  const attn::LayerConfig config;
  val layer = val::object();
  layer.set("dModel", config.d_model);
  layer.set("heads", config.heads);
  layer.set("headDim", config.head_dim);
  layer.set("kvHeads", config.kv_heads);
  layer.set("bias", config.bias);
  layer.set("outBias", val::null());  // unset: as bias
  layer.set("outProj", config.out_proj);
  layer.set("positional", std::string(attn::positional_kind_name(config.positional)));
  val rope = val::object();
  rope.set("pairing", std::string(attn::rope_pairing_name(config.rope.pairing)));
  rope.set("base", config.rope.base);
  rope.set("frequencies", val::null());
  layer.set("rope", rope);
  layer.set("seed", config.seed);
  const attn::ForwardOptions options;
  val forward = val::object();
  forward.set("mask", std::string(attn::mask_kind_name(options.mask.kind)));
  forward.set("window", options.mask.window);
  forward.set("prefix", options.mask.prefix);
  forward.set("scale", options.scale);
  forward.set("weights", options.want_weights);
  forward.set("trace", options.want_trace);
  forward.set("traceHead", options.trace_head);
  forward.set("preview", options.preview_side);
  const val model = model_config_value(attn::ModelConfig{});
  const attn::TrainerConfig trainer_config;
  const attn::AdamWConfig& adamw = trainer_config.optimizer;
  val trainer = val::object();
  trainer.set("task", std::string(attn::task_kind_name(trainer_config.task)));
  trainer.set("lr", adamw.lr);
  trainer.set("batch", trainer_config.batch);
  trainer.set("weightDecay", adamw.weight_decay);
  trainer.set("clip", adamw.clip);
  trainer.set("seed", trainer_config.seed);
  trainer.set("beta1", adamw.beta1);
  trainer.set("beta2", adamw.beta2);
  trainer.set("eps", adamw.eps);
  trainer.set("warmup", adamw.warmup_steps);
  trainer.set("totalSteps", adamw.total_steps);
  trainer.set("minLr", adamw.min_lr);
  trainer.set("heldOut", trainer_config.held_out);
  val defaults = val::object();
  defaults.set("layer", layer);
  defaults.set("forward", forward);
  defaults.set("model", model);
  defaults.set("trainer", trainer);
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
  out.set("positional", name_list(attn::positional_kinds()));
  out.set("masks", name_list(attn::mask_kinds()));
  out.set("tokenizers", name_list(attn::tokenizer_kinds()));
  out.set("gelu", name_list(attn::gelu_kinds()));
  out.set("tasks", name_list(attn::task_kinds()));
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
    val mapped = val::array();
    for (const auto& m : read.mapped) {
      val entry = val::object();
      entry.set("position", m.position);
      entry.set("typed", m.typed);
      entry.set("read", m.read);
      entry.set("how", std::string(attn::name_of(attn::character_mappings(), m.how)));
      mapped.call<void>("push", entry);
    }
    val out = val::object();
    out.set("ids", val::global("Int32Array").new_(view_of(read.ids.data(), read.ids.size())));
    out.set("tokens", string_array(read.characters));
    out.set("mapped", mapped);
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
