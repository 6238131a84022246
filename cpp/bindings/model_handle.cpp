// ModelHandle's bindings: JS ids and options to a Model's calls, its results back.
#include "bindings/model_handle.hpp"

#include "attention/error.hpp"
#include "attention/layer/layer.hpp"
#include "attention/model/next_tokens.hpp"
#include "bindings/fields.hpp"
#if ATTN_BINDINGS_FULL_API
#include "attention/model/activation_patching.hpp"
#include "attention/model/attention_rollout.hpp"
#include "attention/train/head_ablation.hpp"
#include "attention/train/head_scores.hpp"
#include "attention/train/probe.hpp"
#include "attention/train/trainer.hpp"
#endif

namespace attn::bindings {

namespace {

// [{layer, head, scale?}] (types checked by the JS API; scale omitted: the core's default, 0).
std::vector<attn::HeadAblation> head_list(const val& heads) {
  std::vector<attn::HeadAblation> list;
  const std::size_t count = heads["length"].as<std::size_t>();
  for (std::size_t i = 0; i < count; ++i) {
    const val entry = heads[i];
    attn::HeadAblation head;
    head.layer = entry["layer"].as<std::size_t>();
    head.head = entry["head"].as<std::size_t>();
    if (!entry["scale"].isUndefined()) head.scale = entry["scale"].as<float>();
    list.push_back(head);
  }
  return list;
}

}  // namespace

val ModelHandle::configure(val options) {
  return guarded([&] {
    const attn::SmallModelOptions config = read_fields<attn::SmallModelOptions>(options);
    model_ = std::make_unique<attn::Model>(config);
    return val::undefined();
  });
}

val ModelHandle::parameterTable() const {
  return array_of(model_->parameter_table(), [](const attn::ParameterInfo& info) {
    val entry = val::object();
    entry.set("name", info.name);
    entry.set("shape", number_array(info.shape));
    return entry;
  });
}

val ModelHandle::parameter(const std::string& name) {
  return guarded([&] {
    const attn::ParameterInfo& info = model_->parameter_info(name);
    if (info.half || info.quantized) {  // a 2-byte or quantized weight: a float copy, kept here
      widened_ = model_->parameter_values(name);
      return view_of(widened_.data(), widened_.size());
    }
    const auto values = model_->parameter(name);
    return view_of(values.data(), values.size());
  });
}

val ModelHandle::setParameter(const std::string& name, val values) {
  return guarded([&] {
    model_->set_parameter(name, vector_or_empty<float>(values));
    return val::undefined();
  });
}

val ModelHandle::forward(val ids, std::size_t batch, std::size_t n, bool trace, bool last_logits,
                         val heads) {
  return guarded([&] {
    const auto id_values = vector_or_empty<std::int32_t>(ids);
    traced_ = false;
    if (trace) {
      attn::Model::check_trace_batch(batch);
      model_->trace(id_values, n);
      traced_ = true;
    }
    std::vector<attn::HeadAblation> own;
    attn::ForwardRun run;
    run.all_logits = !last_logits;
    if (!heads.isUndefined()) {  // this call's heads instead of ablate()'s
      own = head_list(heads);
      run.heads = &own;
    }
    output_ = model_->forward(id_values, batch, n, run);
    last_batch_ = batch;
    return val::undefined();
  });
}

val ModelHandle::nextTokens(std::size_t k) const {
  return guarded([&] {
    const std::size_t vocab = model_->config().vocab;
    if (output_.logits.size() < vocab) throw attn::Error("nextTokens needs a forward first");
    const std::size_t rows = output_.logits.size() / vocab / last_batch_;
    const auto top = attn::top_next_tokens(output_.logits.subspan((rows - 1) * vocab, vocab), k);
    return array_of(top, [](const attn::NextToken& t) {
      val entry = val::object();
      entry.set("id", t.id);
      entry.set("probability", t.probability);
      return entry;
    });
  });
}

val ModelHandle::layerConfig(std::size_t layer) const {
  return guarded([&] {
    attn::LayerConfig config = model_->layer_config(layer);
    return write_fields(config);
  });
}

val ModelHandle::attentionInput(std::size_t layer) const {
  return guarded([&] {
    const auto input = model_->attention_input(layer);
    return view_of(input.data(), input.size());
  });
}

val ModelHandle::step(std::size_t layer, std::size_t index) const {
  const attn::AttentionLayer& traced = model_->traced_layer(layer);
  return step_value(traced, traced.last_result().trace.steps.at(index));
}

val ModelHandle::saveSafetensors() {
  return guarded([&] {
    bytes_ = model_->save_safetensors();
    return view_of(bytes_.data(), bytes_.size());
  });
}

val ModelHandle::loadSafetensors(val bytes) {
  return guarded([&] {
    model_->load_safetensors(vector_or_empty<std::uint8_t>(bytes));
    return val::undefined();
  });
}

#if ATTN_BINDINGS_FULL_API
namespace {

// The probe the caller gave (ids, and targets or none), or the default one for the model.
attn::Batch probe_of(const attn::Model& model, val ids, val targets, std::size_t batch,
                     std::size_t n) {
  if (ids.isUndefined()) return attn::model_probe(model.config());
  return attn::probe_batch(vector_or_empty<std::int32_t>(ids),
                           vector_or_empty<std::int32_t>(targets), batch, n);
}

}  // namespace

val ModelHandle::gradient(const std::string& name) const {
  return guarded([&] {
    const auto values = model_->gradient(name);
    return view_of(values.data(), values.size());
  });
}

val ModelHandle::lossAndGradients(val ids, val targets, std::size_t batch, std::size_t n) {
  return guarded([&] {
    return val(model_->loss_and_gradients(vector_or_empty<std::int32_t>(ids),
                                          vector_or_empty<std::int32_t>(targets), batch, n));
  });
}

val ModelHandle::probe() {
  return guarded([&] {
    const attn::Batch probe = attn::model_probe(model_->config());
    probe_ids_ = probe.ids;
    val out = val::object();
    out.set("batch", probe.batch);
    out.set("n", probe.n);
    out.set("ids", view_of(probe_ids_.data(), probe_ids_.size()));
    return out;
  });
}

val ModelHandle::headScores(val ids, std::size_t batch, std::size_t n) {
  return guarded([&] {
    const attn::Batch probe = probe_of(*model_, ids, val::undefined(), batch, n);
    const auto scores = attn::model_head_scores(*model_, probe);
    val out = val::array();
    for (std::size_t layer = 0; layer < scores.size(); ++layer) {
      for (std::size_t head = 0; head < scores[layer].size(); ++head) {
        const attn::HeadScores& s = scores[layer][head];
        val entry = val::object();
        entry.set("layer", layer);
        entry.set("head", head);
        entry.set("previousToken", s.previous_token);
        entry.set("induction", s.induction);
        entry.set("sameToken", s.same_token);
        entry.set("firstToken", s.first_token);
        out.call<void>("push", entry);
      }
    }
    return out;
  });
}

val ModelHandle::headAblation(val ids, val targets, std::size_t batch, std::size_t n) {
  return guarded([&] {
    const attn::Batch probe = probe_of(*model_, ids, targets, batch, n);
    const attn::HeadAblationResult result = attn::head_ablation(*model_, probe);
    val heads = val::array();
    for (std::size_t layer = 0; layer < result.heads.size(); ++layer) {
      for (std::size_t head = 0; head < result.heads[layer].size(); ++head) {
        val entry = val::object();
        entry.set("layer", layer);
        entry.set("head", head);
        entry.set("loss", result.heads[layer][head].loss);
        entry.set("delta", result.heads[layer][head].delta);
        heads.call<void>("push", entry);
      }
    }
    val out = val::object();
    out.set("loss", result.loss);
    out.set("heads", heads);
    return out;
  });
}

val ModelHandle::ablate(val heads) {
  return guarded([&] {
    model_->ablate(head_list(heads));
    return val::undefined();
  });
}

val ModelHandle::ablated() const {
  return array_of(model_->ablated(), [](const attn::HeadAblation& head) {
    val entry = val::object();
    entry.set("layer", head.layer);
    entry.set("head", head.head);
    entry.set("scale", head.scale);
    return entry;
  });
}

val ModelHandle::logitLens(val ids, val options) {
  return guarded([&] {
    attn::LogitLensOptions o;  // the core's defaults, replaced by the options given
    if (!options["topK"].isUndefined()) o.top_k = options["topK"].as<std::size_t>();
    if (!options["token"].isUndefined()) o.token = options["token"].as<std::int32_t>();
    lens_ = attn::logit_lens(*model_, vector_or_empty<std::int32_t>(ids), o);
    val out = val::object();
    out.set("rows", lens_.rows);
    out.set("n", lens_.n);
    out.set("topK", lens_.top_k);
    out.set("ids", view_of(lens_.ids.data(), lens_.ids.size()));
    out.set("probs", view_of(lens_.probs.data(), lens_.probs.size()));
    val token = val::null();
    if (lens_.token) {
      token = val::object();
      token.set("id", *lens_.token);
      token.set("probs", view_of(lens_.token_probs.data(), lens_.token_probs.size()));
      token.set("ranks", view_of(lens_.token_ranks.data(), lens_.token_ranks.size()));
    }
    out.set("token", token);
    return out;
  });
}

val ModelHandle::rollout(val ids) {
  return guarded([&] {
    rollout_ = attn::attention_rollout(*model_, vector_or_empty<std::int32_t>(ids));
    return view_of(rollout_.data(), rollout_.size());
  });
}

val ModelHandle::attribute(val ids, std::int32_t a, std::int32_t b) {
  return guarded([&] {
    attribution_ = attn::logit_attribution(*model_, vector_or_empty<std::int32_t>(ids), a, b);
    const attn::LogitAttribution& r = attribution_;
    val out = val::object();
    out.set("total", r.total);
    out.set("embed", r.embed);
    out.set("heads", view_of(r.heads.data(), r.heads.size()));
    out.set("attentionBias", view_of(r.attention_bias.data(), r.attention_bias.size()));
    out.set("mlp", view_of(r.mlp.data(), r.mlp.size()));
    out.set("constant", r.constant);
    return out;
  });
}

val ModelHandle::patch(val clean, val corrupted, std::int32_t a, std::int32_t b,
                       const std::string& over) {
  return guarded([&] {
    patching_ = attn::activation_patching(*model_, vector_or_empty<std::int32_t>(clean),
                                          vector_or_empty<std::int32_t>(corrupted), a, b,
                                          attn::patch_sites_by_name(over));
    const attn::ActivationPatching& r = patching_;
    val out = val::object();
    out.set("clean", r.clean);
    out.set("corrupted", r.corrupted);
    if (r.effect.empty()) {
      val effect = val::object();
      effect.set("attention", view_of(r.attention.data(), r.attention.size()));
      effect.set("mlp", view_of(r.mlp.data(), r.mlp.size()));
      out.set("effect", effect);
    } else {
      out.set("effect", view_of(r.effect.data(), r.effect.size()));
    }
    return out;
  });
}

val ModelHandle::generateStart(val ids, val options) {
  return guarded([&] {
    generator_.reset();
    attn::GenerateOptions o;  // the core's defaults, replaced by the options given
    const auto given = [&](const char* key) { return !options[key].isUndefined(); };
    if (given("maxTokens"))
      o.max_tokens = options["maxTokens"].as<std::size_t>();  // else 20 or less
    if (given("temperature")) o.temperature = options["temperature"].as<double>();
    if (given("topK")) o.top_k = options["topK"].as<std::size_t>();
    if (given("topP")) o.top_p = options["topP"].as<double>();
    if (given("seed")) o.seed = options["seed"].as<std::uint32_t>();
    o.stop = vector_or_empty<std::int32_t>(options["stop"]);
    const auto prompt = vector_or_empty<std::int32_t>(ids);
    output_ = {};  // prefill reuses the forward's buffers
    generator_ = std::make_unique<attn::Generator>(*model_, prompt, o);
    return val::undefined();
  });
}

val ModelHandle::generateNext() {
  return guarded([&] {
    if (!generator_) throw attn::Error("no generation under way: call generateStart first");
    const auto step = generator_->next();
    if (!step) return val::null();
    val out = val::object();
    out.set("id", step->id);
    out.set("probability", step->probability);
    out.set("attention", array_of(step->attention, [](const auto& layer) {
              return view_of(layer.data(), layer.size());
            }));
    return out;
  });
}
#endif  // ATTN_BINDINGS_FULL_API

}  // namespace attn::bindings
