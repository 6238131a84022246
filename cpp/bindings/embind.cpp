// The Embind registrations: every JS-visible value object, class and function, and nothing else.
//
// The bindings live one file per handle beside this one (common.hpp says what they share and the
// one error convention): layer_handle, model_handle, checkpoint_handle, bpe_handle,
// trainer_handle, and the free functions in functions.cpp.
//
// ATTN_BINDINGS_FULL_API (set per target in CMakeLists.txt): 1 binds everything; 0 leaves out the
// trainer, gradients, head scores and ablation, generation, and the checkpoint import and BPE, for
// the <attention-lens> element's smaller module (the JS API says so when one of them is called).
// The left-out handles' sources compile to nothing without it.
#include <emscripten/bind.h>

#include "bindings/functions.hpp"
#include "bindings/layer_handle.hpp"
#include "bindings/model_handle.hpp"
#if ATTN_BINDINGS_FULL_API
#include "bindings/bpe_handle.hpp"
#include "bindings/checkpoint_handle.hpp"
#include "bindings/trainer_handle.hpp"
#endif

EMSCRIPTEN_BINDINGS(attention_lens) {
  using namespace attn::bindings;
  // Forward, weights and traces: every build. Training, scores and checkpoints: not in the
  // element's module (ATTN_BINDINGS_FULL_API=0, CMakeLists.txt's attention_lens_embed).
  [[maybe_unused]] const auto model =
      emscripten::class_<ModelHandle>("ModelHandle")
          .constructor<>()
          .function("configure", &ModelHandle::configure)
          .function("config", &ModelHandle::config)
          .function("parameterTable", &ModelHandle::parameterTable)
          .function("parameter", &ModelHandle::parameter)
          .function("setParameter", &ModelHandle::setParameter)
          .function("forward", &ModelHandle::forward)
          .function("logits", &ModelHandle::logits)
          .function("nextTokens", &ModelHandle::nextTokens)
          .function("attention", &ModelHandle::attention)
          .function("attentionInput", &ModelHandle::attentionInput)
          .function("layerConfig", &ModelHandle::layerConfig)
          .function("stepCount", &ModelHandle::stepCount)
          .function("step", &ModelHandle::step)
          .function("saveSafetensors", &ModelHandle::saveSafetensors)
          .function("loadSafetensors", &ModelHandle::loadSafetensors);
#if ATTN_BINDINGS_FULL_API
  model.function("gradient", &ModelHandle::gradient)
      .function("lossAndGradients", &ModelHandle::lossAndGradients)
      .function("probe", &ModelHandle::probe)
      .function("headScores", &ModelHandle::headScores)
      .function("headAblation", &ModelHandle::headAblation)
      .function("ablate", &ModelHandle::ablate)
      .function("ablated", &ModelHandle::ablated)
      .function("logitLens", &ModelHandle::logitLens)
      .function("rollout", &ModelHandle::rollout)
      .function("attribute", &ModelHandle::attribute)
      .function("patch", &ModelHandle::patch)
      .function("generateStart", &ModelHandle::generateStart)
      .function("generateNext", &ModelHandle::generateNext)
      .function("generateEnd", &ModelHandle::generateEnd);
  emscripten::class_<CheckpointHandle>("CheckpointHandle")
      .constructor<>()
      .function("open", &CheckpointHandle::open)
      .function("provide", &CheckpointHandle::provide)
      .function("begin", &CheckpointHandle::begin)
      .function("tokenizerNeed", &CheckpointHandle::tokenizerNeed)
      .function("memoryBytes", &CheckpointHandle::memoryBytes)
      .function("buffer", &CheckpointHandle::buffer)
      .function("read", &CheckpointHandle::read)
      .function("finish", &CheckpointHandle::finish);
  emscripten::class_<BpeHandle>("BpeHandle")
      .constructor<>()
      .function("configure", &BpeHandle::configure)
      .function("configureJson", &BpeHandle::configureJson)
      .function("encode", &BpeHandle::encode)
      .function("tokenTexts", &BpeHandle::tokenTexts);
  emscripten::class_<TrainerHandle>("TrainerHandle")
      .constructor<>()
      .function("configure", &TrainerHandle::configure)
      .function("step", &TrainerHandle::step)
      .function("evaluate", &TrainerHandle::evaluate)
      .function("steps", &TrainerHandle::steps)
      .function("taskName", &TrainerHandle::taskName)
      .function("vocabulary", &TrainerHandle::vocabulary)
      .function("encode", &TrainerHandle::encode)
      .function("decode", &TrainerHandle::decode)
      .function("heldOut", &TrainerHandle::heldOut);
#endif  // ATTN_BINDINGS_FULL_API
  emscripten::class_<LayerHandle>("LayerHandle")
      .constructor<>()
      .function("configure", &LayerHandle::configure)
      .function("headDim", &LayerHandle::headDim)
      .function("kvHeads", &LayerHandle::kvHeads)
      .function("outBias", &LayerHandle::outBias)
      .function("outputDim", &LayerHandle::outputDim)
      .function("setWeights", &LayerHandle::setWeights)
      .function("weight", &LayerHandle::weight)
      .function("loadSafetensors", &LayerHandle::loadSafetensors)
      .function("saveSafetensors", &LayerHandle::saveSafetensors)
      .function("embed", &LayerHandle::embed)
      .function("forward", &LayerHandle::forward)
      .function("output", &LayerHandle::output)
      .function("attention", &LayerHandle::attention)
      .function("preview", &LayerHandle::preview)
      .function("stepCount", &LayerHandle::stepCount)
      .function("step", &LayerHandle::step)
      .function("explain", &LayerHandle::explain);
  emscripten::function("catalog", &catalog);
  emscripten::function("numpyRandn", &numpyRandn);
  emscripten::function("tokenize", &tokenize);
  emscripten::function("readInAlphabet", &readInAlphabet);
  emscripten::function("simdArch", &simdArch);
  emscripten::function("heapInUse", &heapInUse);
  emscripten::function("setThreads", &setThreads);
  emscripten::function("threadCount", &threadCount);
}
