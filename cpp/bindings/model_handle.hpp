// ModelHandle: one Model for JS (createModel, trained models, checkpoints): forward, traces, files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attention/model/generate.hpp"
#include "attention/model/activation_patching.hpp"
#include "attention/model/logit_attribution.hpp"
#include "attention/model/logit_lens.hpp"
#include "attention/model/model.hpp"
#include "bindings/common.hpp"

namespace attn::bindings {

// Forward, weights and traces in every build; gradients, the probe, head scores, ablation and
// generation only with ATTN_BINDINGS_FULL_API (not in the element's module).
class ModelHandle {
 public:
  // createModel's options, read by SmallModelOptions' field list (the JS API filled its defaults).
  val configure(val options);

  attn::Model& model() { return *model_; }
  // The model's config (model_config_value): what a checkpoint's config.json became.
  val config() const { return model_config_value(model_->config()); }
  void adopt(std::unique_ptr<attn::Model> model) {
#if ATTN_BINDINGS_FULL_API
    generator_.reset();  // it refers to the model it ran
#endif
    model_ = std::move(model);
    output_ = {};
    traced_ = false;
  }

  // [{name, shape}] in buffer order.
  val parameterTable() const;
  val parameter(const std::string& name);
  val setParameter(const std::string& name, val values);

  // Runs the forward (and, with trace, the traced layers first); logits() and attention(l)
  // then read it.
  // last_logits: logits() holds each sequence's last position's only; heads: [{layer, head,
  // scale?}] ablated in this call instead of ablate()'s (undefined: ablate()'s).
  val forward(val ids, std::size_t batch, std::size_t n, bool trace, bool last_logits, val heads);
  val logits() const {
    return view_of(output_.logits.data(), output_.logits.size());
  }
  // [{id, probability}]: the k most likely next tokens after the last position of the last
  // forward's first sequence (top_next_tokens).
  val nextTokens(std::size_t k) const;
  val attention(std::size_t layer) const {
    const auto& weights = output_.attention.at(layer);
    return view_of(weights.data(), weights.size());
  }
  // Layer l's attention input of the last forward: [batch·n·dModel].
  val attentionInput(std::size_t layer) const;
  // Layer l's attention as createLayer's options (Model::layer_config: sizes, biases, RoPE with
  // its rotary dims, scale, soft-cap, q/k norms), or an Error object for a layer out of range.
  val layerConfig(std::size_t layer) const;
  std::size_t stepCount(std::size_t layer) const {
    return traced_ ? model_->traced_layer(layer).last_result().trace.steps.size() : 0;
  }
  val step(std::size_t layer, std::size_t index) const;

  val saveSafetensors();
  val loadSafetensors(val bytes);

#if ATTN_BINDINGS_FULL_API
  val gradient(const std::string& name) const;
  val lossAndGradients(val ids, val targets, std::size_t batch, std::size_t n);
  // {batch, n, ids}: the default probe headScores and headAblation use (model_probe; the ids a
  // view the JS API copies at once).
  val probe();
  // [{layer, head, previousToken, induction, sameToken, firstToken}] (NaN: not measured).
  val headScores(val ids, std::size_t batch, std::size_t n);
  // {loss, heads: [{layer, head, loss, delta}]}.
  val headAblation(val ids, val targets, std::size_t batch, std::size_t n);

  // Model::ablate of [{layer, head, scale?}] (scale omitted: the core's default, 0); ablated():
  // [{layer, head, scale}] in force.
  val ablate(val heads);
  val ablated() const;
  // The analyses of one sequence (the heads ablated now ablated), each returning views into this
  // handle that the JS API copies at once: logitLens (options {topK, token}, each undefined for
  // the core's default) → {rows, n, topK, ids, probs, token: null | {id, probs, ranks}};
  // rollout → [layers·n·n]; attribute → {total, embed, heads, attentionBias, mlp, constant}.
  val logitLens(val ids, val options);
  val rollout(val ids);
  val attribute(val ids, std::int32_t a, std::int32_t b);
  // patch → {clean, corrupted, effect}: effect [layers·heads] or [layers·n], or {attention, mlp}
  // over "layers"; views the JS API copies at once.
  val patch(val clean, val corrupted, std::int32_t a, std::int32_t b, const std::string& over);

  // Generation, one token per call so the JS API can hand each to onToken: generateStart runs the
  // prompt (options {maxTokens, temperature, topK, topP, seed, stop}, each undefined for the core's
  // default; the last forward's results are gone afterwards: its buffers were reused);
  // generateNext returns {id, probability, attention: per layer a view [heads·t]} or null when
  // done; generateEnd frees the KV cache.
  val generateStart(val ids, val options);
  val generateNext();
  void generateEnd() {
    generator_.reset();
  }
#endif

 private:
  std::unique_ptr<attn::Model> model_;
  attn::ModelOutput output_;
  std::size_t last_batch_ = 1;
#if ATTN_BINDINGS_FULL_API
  std::vector<std::int32_t> probe_ids_;
  std::unique_ptr<attn::Generator> generator_;
  attn::LogitLens lens_;                // logitLens's result, viewed until the next call
  std::vector<float> rollout_;          // rollout's
  attn::LogitAttribution attribution_;  // attribute's
  attn::ActivationPatching patching_;   // patch's
#endif
  bool traced_ = false;
  std::vector<std::uint8_t> bytes_;
  std::vector<float> widened_;  // parameter(): the last 2-byte weight asked for, as float
};

}  // namespace attn::bindings
