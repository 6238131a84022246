// Embind bindings: marshals JS values to the core and back. No math and no policy here: every
// check, default and message comes from the core.
//
// One error convention: every fallible binding returns a val that is either its result
// (undefined when it has none) or { error: message }, never throws into JS; the JS API
// (web/api/attention-lens-api.js) passes each through one unwrap() that throws
// new Error(message), so the module keeps working after any bad input. Results never carry an
// `error` key. Views into wasm memory (typed_memory_view) are copied by the JS API at once.
//
// ATTN_BINDINGS_TRAINING (set per target in CMakeLists.txt): 1 binds everything; 0 leaves out the
// trainer, gradients, head scores and ablation, and the GPT-2 checkpoint import and BPE, for the
// <attention-lens> element's smaller module (the JS API says so when one of them is called).
#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <memory>
#include <new>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/layer/explain.hpp"
#include "attention/layer/layer.hpp"
#include "attention/layer/step_text.hpp"
#include "attention/layer/steps.hpp"
#include "attention/model/checkpoint_config.hpp"
#include "attention/model/gpt2_checkpoint.hpp"
#include "attention/model/model.hpp"
#include "attention/model/next_tokens.hpp"
#include "attention/ops/embedding.hpp"
#include "attention/ops/gelu.hpp"
#include "attention/ops/simd.hpp"
#include "attention/rng.hpp"
#include "attention/text/alphabet.hpp"
#include "attention/text/bpe_tokenizer.hpp"
#include "attention/text/tokenizer.hpp"
#include "attention/train/head_ablation.hpp"
#include "attention/train/head_scores.hpp"
#include "attention/train/probe.hpp"
#include "attention/train/tasks.hpp"
#include "attention/train/trainer.hpp"

using emscripten::val;

namespace {

val error_value(const char* message) {
  val out = val::object();
  out.set("error", std::string(message));
  return out;
}

// Runs `body` (returning the result as a val); returns its result or { error: message }.
template <class Body>
val guarded(Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return error_value("out of memory: the request needs more memory than the page can have");
  } catch (const std::exception& e) {
    return error_value(e.what());
  } catch (...) {
    return error_value("unexpected internal error");
  }
}

// A view into wasm memory. The JS API copies it at once: memory growth detaches views.
template <class T>
val view_of(const T* data, std::size_t count) {
  return val(emscripten::typed_memory_view(count, data));
}

template <class T>
std::vector<T> vector_or_empty(const val& array) {
  if (array.isUndefined() || array.isNull()) return {};
  return emscripten::convertJSArrayToNumberVector<T>(array);
}

template <class Range>
val string_array(const Range& items) {
  val out = val::array();
  for (const auto& item : items) out.call<void>("push", std::string(item));
  return out;
}

template <class Kind>
val name_list(std::span<const attn::NamedKind<Kind>> table) {
  return string_array(attn::table_names(table));
}

// Every field is given by the JS API (its defaults come from catalog().defaults).
struct ConfigArgs {
  std::size_t dModel{};
  std::size_t heads{};
  std::size_t headDim{};
  bool bias{};
  bool outProj{};
  std::string positional;
  std::uint32_t seed{};
};

struct ForwardArgs {
  std::size_t n{};
  bool cross{};
  std::size_t kvN{};
  std::string mask;
  std::size_t window{};
  std::size_t prefix{};
  bool scale{};
  bool weights{};
  bool trace{};
  int traceHead{};
  std::size_t preview{};
};

struct ModelArgs {
  std::size_t vocab{};
  std::size_t context{};
  std::size_t dModel{};
  std::size_t heads{};
  std::size_t layers{};
  std::string positional;
  bool layerNorm{};
  bool mlp{};
  bool tied{};
  bool bias{};
  std::string gelu;
  std::uint32_t seed{};
};

struct TrainerArgs {
  std::string task;
  double lr{};
  std::size_t batch{};
  double weightDecay{};
  double clip{};
  std::uint32_t seed{};
  double beta1{};
  double beta2{};
  double eps{};
  std::size_t warmup{};
  std::size_t totalSteps{};
  double minLr{};
  std::size_t heldOut{};
};

// {id, title, equation, shape, head, rows, cols, data}: one traced step of `layer`, the id and
// axes from the catalog, the title and equation rendered by the core (data a view the JS API
// copies).
val step_value(const attn::AttentionLayer& layer, const attn::Step& s) {
  const attn::StepInfo& info = attn::step_info(s.kind);
  const attn::StepText text = attn::step_text(layer, s);
  val shape = val::array();
  for (auto extent : s.shape) shape.call<void>("push", extent);
  val out = val::object();
  out.set("id", std::string(info.id));
  out.set("title", text.title);
  out.set("equation", text.equation);
  out.set("shape", shape);
  out.set("head", s.head);
  out.set("rows", std::string(info.rows));
  out.set("cols", std::string(info.cols));
  out.set("data", view_of(s.data.data(), s.data.size()));
  return out;
}

// A model's config as createModel's options: { vocab, context, dModel, heads, layers,
// positional, layerNorm, mlp, tied, bias, gelu, seed }.
val model_config_value(const attn::ModelConfig& config) {
  val model = val::object();
  model.set("vocab", config.vocab);
  model.set("context", config.context);
  model.set("dModel", config.d_model);
  model.set("heads", config.heads);
  model.set("layers", config.layers);
  model.set("positional", std::string(attn::positional_kind_name(config.positional)));
  model.set("layerNorm", config.layer_norm);
  model.set("mlp", config.mlp);
  model.set("tied", config.tied);
  model.set("bias", config.bias);
  model.set("gelu", std::string(attn::gelu_kind_name(config.gelu)));
  model.set("seed", config.seed);
  return model;
}

// The step catalog, the option names, the defaults and the limits (lens.catalog).
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
  layer.set("bias", config.bias);
  layer.set("outProj", config.out_proj);
  layer.set("positional", std::string(attn::positional_kind_name(config.positional)));
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

class LayerHandle {
 public:
  val configure(const ConfigArgs& args) {
    return guarded([&] {
      attn::LayerConfig config;
      config.d_model = args.dModel;
      config.heads = args.heads;
      config.head_dim = args.headDim;
      config.bias = args.bias;
      config.out_proj = args.outProj;
      config.positional = attn::parse_positional_kind(args.positional);
      config.seed = args.seed;
      layer_ = std::make_unique<attn::AttentionLayer>(config);
      embedding_table_ = std::make_unique<attn::EmbeddingTable>(config.seed, config.d_model);
      return val::undefined();
    });
  }

  std::size_t headDim() const { return layer_->head_dim(); }
  std::size_t outputDim() const { return layer_->output_dim(); }

  val setWeights(val in_w, val in_b, val out_w, val out_b) {
    return guarded([&] {
      attn::LayerWeights weights;
      weights.in_proj_weight = vector_or_empty<float>(in_w);
      weights.in_proj_bias = vector_or_empty<float>(in_b);
      weights.out_proj_weight = vector_or_empty<float>(out_w);
      weights.out_proj_bias = vector_or_empty<float>(out_b);
      layer_->set_weights(std::move(weights));
      return val::undefined();
    });
  }

  // A view of the tensor with this state_dict name (an unknown name is an error).
  val weight(const std::string& name) const {
    return guarded([&] {
      const std::vector<float>& v = attn::weight_by_name(layer_->weights(), name);
      return view_of(v.data(), v.size());
    });
  }

  val loadSafetensors(val bytes) {
    return guarded([&] {
      layer_->load_safetensors(vector_or_empty<std::uint8_t>(bytes));
      return val::undefined();
    });
  }

  val saveSafetensors() {
    return guarded([&] {
      bytes_ = layer_->save_safetensors();
      return view_of(bytes_.data(), bytes_.size());
    });
  }

  val embed(val ids) {
    return guarded([&] {
      const auto id_values = vector_or_empty<std::uint32_t>(ids);
      embedded_.resize(id_values.size(), layer_->config().d_model);
      embedding_table_->lookup(id_values, embedded_);
      return view_of(embedded_.data(), embedded_.size());
    });
  }

  val forward(val x, val kv, const ForwardArgs& args, val key_padding, val cells) {
    return guarded([&] {
      const auto x_values = vector_or_empty<float>(x);
      const auto kv_values = vector_or_empty<float>(kv);
      attn::ForwardOptions options;
      options.n = args.n;
      options.cross = args.cross;
      options.kv = kv_values;
      options.kv_n = args.kvN;
      options.mask.kind = attn::parse_mask_kind(args.mask);
      options.mask.window = args.window;
      options.mask.prefix = args.prefix;
      options.mask.key_padding = vector_or_empty<std::uint8_t>(key_padding);
      options.mask.cells = vector_or_empty<std::uint8_t>(cells);
      options.scale = args.scale;
      options.want_weights = args.weights;
      options.want_trace = args.trace;
      options.trace_head = args.traceHead;
      options.preview_side = args.preview;
      result_ = &layer_->forward(x_values, options);
      return val::undefined();
    });
  }

  val output() const { return view_of(result_->output.data(), result_->output.size()); }
  val attention() const { return view_of(result_->attention.data(), result_->attention.size()); }
  // {step, rows, cols, data}: every head's weights max-pooled (data a view the JS API copies).
  val preview() const {
    const attn::WeightsPreview& p = result_->preview;
    val out = val::object();
    out.set("step", p.step);
    out.set("rows", p.rows);
    out.set("cols", p.cols);
    out.set("data", view_of(p.values.data(), p.values.size()));
    return out;
  }
  std::size_t stepCount() const { return result_ ? result_->trace.steps.size() : 0; }
  // One traced step (step_value).
  val step(std::size_t index) const { return step_value(*layer_, result_->trace.steps.at(index)); }

  // One cell of the last traced forward explained: {step, head, row, col, value, summary,
  // equation, leftLabel, rightLabel, quantities: [{name, latex, value}], termIndex, termLeft,
  // termRight, termProduct} (the term columns are views the JS API copies at once).
  val explain(const std::string& step, int head, std::size_t row, std::size_t col) {
    return guarded([&] {
      const attn::CellExplanation e = attn::explain_cell(*layer_, step, head, row, col);
      term_index_.clear();
      term_left_.clear();
      term_right_.clear();
      term_product_.clear();
      for (const auto& term : e.terms) {
        term_index_.push_back(static_cast<std::uint32_t>(term.index));
        term_left_.push_back(term.left);
        term_right_.push_back(term.right);
        term_product_.push_back(term.product);
      }
      val quantities = val::array();
      for (const auto& q : e.quantities) {
        val quantity = val::object();
        quantity.set("name", q.name);
        quantity.set("latex", q.latex);
        quantity.set("value", q.value);
        quantities.call<void>("push", quantity);
      }
      val out = val::object();
      out.set("step", e.step);
      out.set("head", e.head);
      out.set("row", e.row);
      out.set("col", e.col);
      out.set("value", e.value);
      out.set("summary", e.summary);
      out.set("equation", e.equation);
      out.set("leftLabel", e.left_label);
      out.set("rightLabel", e.right_label);
      out.set("quantities", quantities);
      // Views last: nothing may allocate between creating them and the JS API's copies.
      out.set("termIndex", view_of(term_index_.data(), term_index_.size()));
      out.set("termLeft", view_of(term_left_.data(), term_left_.size()));
      out.set("termRight", view_of(term_right_.data(), term_right_.size()));
      out.set("termProduct", view_of(term_product_.data(), term_product_.size()));
      return out;
    });
  }

 private:
  std::unique_ptr<attn::AttentionLayer> layer_;
  const attn::ForwardResult* result_ = nullptr;
  std::unique_ptr<attn::EmbeddingTable> embedding_table_;  // rows kept across embed() calls
  attn::Matrix embedded_;
  std::vector<std::uint8_t> bytes_;
  std::vector<std::uint32_t> term_index_;
  std::vector<float> term_left_, term_right_, term_product_;
};

// The probe the caller gave (ids, and targets or none), or the default one for the model.
attn::Batch probe_of(const attn::Model& model, val ids, val targets, std::size_t batch,
                     std::size_t n) {
  if (ids.isUndefined()) return attn::model_probe(model.config());
  return attn::probe_batch(vector_or_empty<std::int32_t>(ids),
                           vector_or_empty<std::int32_t>(targets), batch, n);
}

class ModelHandle {
 public:
  val configure(const ModelArgs& args) {
    return guarded([&] {
      attn::ModelConfig config;
      config.vocab = args.vocab;
      config.context = args.context;
      config.d_model = args.dModel;
      config.heads = args.heads;
      config.layers = args.layers;
      config.positional = attn::parse_positional_kind(args.positional);
      config.layer_norm = args.layerNorm;
      config.mlp = args.mlp;
      config.tied = args.tied;
      config.bias = args.bias;
      config.gelu = attn::parse_gelu_kind(args.gelu);
      config.seed = args.seed;
      model_ = std::make_unique<attn::Model>(config);
      return val::undefined();
    });
  }

  attn::Model& model() { return *model_; }
  // The model's config (model_config_value): what a checkpoint's config.json became.
  val config() const { return model_config_value(model_->config()); }
  void adopt(std::unique_ptr<attn::Model> model) {
    model_ = std::move(model);
    output_ = {};
    traced_ = false;
  }

  // [{name, shape}] in buffer order.
  val parameterTable() const {
    val out = val::array();
    for (const attn::ParameterInfo& info : model_->parameter_table()) {
      val shape = val::array();
      for (auto extent : info.shape) shape.call<void>("push", extent);
      val entry = val::object();
      entry.set("name", info.name);
      entry.set("shape", shape);
      out.call<void>("push", entry);
    }
    return out;
  }

  val parameter(const std::string& name) {
    return guarded([&] {
      const auto values = model_->parameter(name);
      return view_of(values.data(), values.size());
    });
  }

  val setParameter(const std::string& name, val values) {
    return guarded([&] {
      model_->set_parameter(name, vector_or_empty<float>(values));
      return val::undefined();
    });
  }

  val gradient(const std::string& name) const {
    return guarded([&] {
      const auto values = model_->gradient(name);
      return view_of(values.data(), values.size());
    });
  }

  // Runs the forward (and, with trace, the traced layers first); logits() and attention(l)
  // then read it.
  val forward(val ids, std::size_t batch, std::size_t n, bool trace) {
    return guarded([&] {
      const auto id_values = vector_or_empty<std::int32_t>(ids);
      traced_ = false;
      if (trace) {
        attn::Model::check_trace_batch(batch);
        model_->trace(id_values, n);
        traced_ = true;
      }
      output_ = model_->forward(id_values, batch, n);
      last_batch_ = batch;
      return val::undefined();
    });
  }

  val logits() const { return view_of(output_.logits.data(), output_.logits.size()); }
  // [{id, probability}]: the k most likely next tokens after the last position of the last
  // forward's first sequence (top_next_tokens).
  val nextTokens(std::size_t k) const {
    return guarded([&] {
      const std::size_t vocab = model_->config().vocab;
      if (output_.logits.size() < vocab) throw attn::Error("nextTokens needs a forward first");
      const std::size_t rows = output_.logits.size() / vocab / last_batch_;
      const auto top = attn::top_next_tokens(output_.logits.subspan((rows - 1) * vocab, vocab), k);
      val out = val::array();
      for (const attn::NextToken& t : top) {
        val entry = val::object();
        entry.set("id", t.id);
        entry.set("probability", t.probability);
        out.call<void>("push", entry);
      }
      return out;
    });
  }
  val attention(std::size_t layer) const {
    const auto& weights = output_.attention.at(layer);
    return view_of(weights.data(), weights.size());
  }
  // Layer l's attention input of the last forward: [batch·n·dModel].
  val attentionInput(std::size_t layer) const {
    return guarded([&] {
      const auto input = model_->attention_input(layer);
      return view_of(input.data(), input.size());
    });
  }
  std::size_t stepCount(std::size_t layer) const {
    return traced_ ? model_->traced_layer(layer).last_result().trace.steps.size() : 0;
  }
  val step(std::size_t layer, std::size_t index) const {
    const attn::AttentionLayer& traced = model_->traced_layer(layer);
    return step_value(traced, traced.last_result().trace.steps.at(index));
  }

  val lossAndGradients(val ids, val targets, std::size_t batch, std::size_t n) {
    return guarded([&] {
      return val(model_->loss_and_gradients(vector_or_empty<std::int32_t>(ids),
                                            vector_or_empty<std::int32_t>(targets), batch, n));
    });
  }

  val saveSafetensors() {
    return guarded([&] {
      bytes_ = model_->save_safetensors();
      return view_of(bytes_.data(), bytes_.size());
    });
  }

  val loadSafetensors(val bytes) {
    return guarded([&] {
      model_->load_safetensors(vector_or_empty<std::uint8_t>(bytes));
      return val::undefined();
    });
  }

  // {batch, n, ids}: the default probe headScores and headAblation use (model_probe; the ids a
  // view the JS API copies at once).
  val probe() {
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

  // [{layer, head, previousToken, induction, sameToken, firstToken}] (NaN: not measured).
  val headScores(val ids, std::size_t batch, std::size_t n) {
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

  // {loss, heads: [{layer, head, loss, delta}]}.
  val headAblation(val ids, val targets, std::size_t batch, std::size_t n) {
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

 private:
  std::unique_ptr<attn::Model> model_;
  attn::ModelOutput output_;
  std::size_t last_batch_ = 1;
  std::vector<std::int32_t> probe_ids_;
  bool traced_ = false;
  std::vector<std::uint8_t> bytes_;
};

// config.json's fields, as the JS API read them.
#if ATTN_BINDINGS_TRAINING
// A streamed GPT-2 checkpoint import: headBytes(first 8 bytes) says how much of the file's start
// begin() needs; begin(head, config.json's text) lists the reads; for each chunk the JS API writes
// the file's bytes into buffer(size) and calls read(); finish() hands the model over.
class CheckpointHandle {
 public:
  double headBytes(val first, double file_size) const {
    return double(attn::safetensors::head_bytes_needed(vector_or_empty<std::uint8_t>(first),
                                                       std::uint64_t(file_size)));
  }
  val begin(val head, double file_size, const std::string& config_json) {
    return guarded([&] {
      const attn::Gpt2Config config = attn::gpt2_config(attn::ConfigJson(config_json));
      import_ = std::make_unique<attn::Gpt2Import>(vector_or_empty<std::uint8_t>(head),
                                                   std::uint64_t(file_size), config);
      val reads = val::array();
      for (std::size_t i = 0; i < import_->reads().size(); ++i) {
        const attn::Gpt2Read& where = import_->reads()[i];
        val entry = val::object();
        entry.set("name", where.name);
        entry.set("begin", double(where.begin));
        entry.set("end", double(where.end));
        entry.set("whole", import_->needs_whole(i));
        reads.call<void>("push", entry);
      }
      return reads;
    });
  }
  // { vocab, gpt2, missing } after begin(): the model's vocabulary size, whether GPT-2's own
  // tokenizer serves when none is given, and otherwise what tokenize says.
  val tokenizerNeed() const {
    return guarded([&] {
      const std::size_t vocab = import_->model_config().vocab;
      const attn::DefaultTokenizer fallback = attn::default_tokenizer(vocab);
      val out = val::object();
      out.set("vocab", vocab);
      out.set("gpt2", fallback.gpt2);
      out.set("missing", fallback.missing);
      return out;
    });
  }
  // A view of `size` bytes of wasm memory for the next chunk (valid until the next allocation).
  val buffer(std::size_t size) {
    return guarded([&] {
      buffer_.resize(size);
      return view_of(buffer_.data(), size);
    });
  }
  val read(std::size_t index, std::size_t size, double offset) {
    return guarded([&] {
      import_->read(index, std::span<const std::uint8_t>(buffer_.data(), size),
                    std::uint64_t(offset));
      return val::undefined();
    });
  }
  val finish(ModelHandle& model) {
    return guarded([&] {
      std::vector<std::uint8_t>().swap(buffer_);
      model.adopt(import_->finish());
      import_.reset();
      return val::undefined();
    });
  }

 private:
  std::unique_ptr<attn::Gpt2Import> import_;
  std::vector<std::uint8_t> buffer_;
};

// GPT-2's byte-level BPE over a vocabulary and merges given as text (one entry per line).
class BpeHandle {
 public:
  val configure(const std::string& vocab, const std::string& merges, std::size_t model_vocab) {
    return guarded([&] {
      auto tokenizer = std::make_unique<attn::BpeTokenizer>(vocab, merges);
      tokenizer->check_fits(model_vocab);
      tokenizer_ = std::move(tokenizer);
      return val(double(tokenizer_->vocab_size()));
    });
  }
  // { ids: Int32Array view, tokens: [Uint8Array bytes] } of UTF-8 (or any) bytes.
  val encode(val bytes) {
    return guarded([&] {
      const auto input = vector_or_empty<std::uint8_t>(bytes);
      ids_ = tokenizer_->encode(
          std::string_view(reinterpret_cast<const char*>(input.data()), input.size()));
      val tokens = val::array();
      for (const std::int32_t id : ids_) {
        const std::string& token = tokenizer_->token_bytes(id);
        tokens.call<void>(
            "push", val(emscripten::typed_memory_view(
                            token.size(), reinterpret_cast<const std::uint8_t*>(token.data())))
                        .call<val>("slice"));
      }
      val out = val::object();
      out.set("ids", view_of(ids_.data(), ids_.size()));
      out.set("tokens", tokens);
      return out;
    });
  }
  // Each id's readable text (BpeTokenizer::token_text).
  val tokenTexts(val ids) const {
    return guarded([&] {
      val texts = val::array();
      for (const std::int32_t id : vector_or_empty<std::int32_t>(ids)) {
        texts.call<void>("push", tokenizer_->token_text(id));
      }
      return texts;
    });
  }

 private:
  std::unique_ptr<attn::BpeTokenizer> tokenizer_;
  std::vector<std::int32_t> ids_;
};

// A trainer borrows its ModelHandle's model: the JS API disposes the trainer before the model.
class TrainerHandle {
 public:
  val configure(ModelHandle& model, const TrainerArgs& args) {
    return guarded([&] {
      attn::TrainerConfig config;
      config.task = attn::parse_task_kind(args.task);
      config.batch = args.batch;
      config.held_out = args.heldOut;
      config.seed = args.seed;
      config.optimizer.lr = args.lr;
      config.optimizer.beta1 = args.beta1;
      config.optimizer.beta2 = args.beta2;
      config.optimizer.eps = args.eps;
      config.optimizer.weight_decay = args.weightDecay;
      config.optimizer.clip = args.clip;
      config.optimizer.warmup_steps = args.warmup;
      config.optimizer.total_steps = args.totalSteps;
      config.optimizer.min_lr = args.minLr;
      trainer_ = std::make_unique<attn::Trainer>(model.model(), config);
      return val::undefined();
    });
  }

  // {step, loss, heldOutLoss, accuracy}; without evaluate {step, loss}.
  val step(std::size_t k, bool evaluate) {
    return guarded([&] {
      const attn::TrainReport report = trainer_->step(k, evaluate);
      val out = val::object();
      out.set("step", report.step);
      out.set("loss", report.loss);
      if (report.evaluated) {
        out.set("heldOutLoss", report.held_out_loss);
        out.set("accuracy", report.accuracy);
      }
      return out;
    });
  }

  // {step, heldOutLoss, accuracy}: the held-out set now.
  val evaluate() {
    return guarded([&] {
      const attn::Evaluation held_out = trainer_->evaluate_held_out();
      val out = val::object();
      out.set("step", trainer_->steps());
      out.set("heldOutLoss", held_out.loss);
      out.set("accuracy", held_out.accuracy);
      return out;
    });
  }

  std::size_t steps() const { return trainer_->steps(); }
  std::string taskName() const {
    return std::string(attn::task_kind_name(trainer_->task().kind()));
  }
  std::string vocabulary() const { return trainer_->task().vocabulary(); }

  val encode(const std::string& text) {
    return guarded([&] {
      ids_ = trainer_->task().encode(text);
      return view_of(ids_.data(), ids_.size());
    });
  }

  val decode(val ids) {
    return guarded(
        [&] { return val(trainer_->task().decode(vector_or_empty<std::int32_t>(ids))); });
  }

  // {batch, n, ids, targets} of the held-out set (views the JS API copies at once).
  val heldOut() const {
    const attn::Batch& held = trainer_->task().held_out();
    val out = val::object();
    out.set("batch", held.batch);
    out.set("n", held.n);
    out.set("ids", view_of(held.ids.data(), held.ids.size()));
    out.set("targets", view_of(held.targets.data(), held.targets.size()));
    return out;
  }

 private:
  std::unique_ptr<attn::Trainer> trainer_;
  std::vector<std::int32_t> ids_;
};
#endif  // ATTN_BINDINGS_TRAINING

// np.random.RandomState(seed).randn(count): a view the JS API copies at once.
std::vector<double> randn_result;

val numpyRandn(std::uint32_t seed, std::size_t count) {
  return guarded([&] {
    randn_result.assign(count, 0.0);
    attn::NumpyRandomState(seed).fill_randn(randn_result);
    return view_of(randn_result.data(), randn_result.size());
  });
}

// {tokens: string[], ids: number[]}.
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

// A character model's text in its alphabet: { ids: Int32Array (a copy), tokens, mapped:
// [{ position, typed, read, how }], note }.
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
std::size_t heapInUse() {
  return mallinfo().uordblks;
}

}  // namespace

EMSCRIPTEN_BINDINGS(attention_lens) {
  emscripten::value_object<ConfigArgs>("ConfigArgs")
      .field("dModel", &ConfigArgs::dModel)
      .field("heads", &ConfigArgs::heads)
      .field("headDim", &ConfigArgs::headDim)
      .field("bias", &ConfigArgs::bias)
      .field("outProj", &ConfigArgs::outProj)
      .field("positional", &ConfigArgs::positional)
      .field("seed", &ConfigArgs::seed);
  emscripten::value_object<ForwardArgs>("ForwardArgs")
      .field("n", &ForwardArgs::n)
      .field("cross", &ForwardArgs::cross)
      .field("kvN", &ForwardArgs::kvN)
      .field("mask", &ForwardArgs::mask)
      .field("window", &ForwardArgs::window)
      .field("prefix", &ForwardArgs::prefix)
      .field("scale", &ForwardArgs::scale)
      .field("weights", &ForwardArgs::weights)
      .field("trace", &ForwardArgs::trace)
      .field("traceHead", &ForwardArgs::traceHead)
      .field("preview", &ForwardArgs::preview);
#if ATTN_BINDINGS_TRAINING
#endif
  emscripten::value_object<ModelArgs>("ModelArgs")
      .field("vocab", &ModelArgs::vocab)
      .field("context", &ModelArgs::context)
      .field("dModel", &ModelArgs::dModel)
      .field("heads", &ModelArgs::heads)
      .field("layers", &ModelArgs::layers)
      .field("positional", &ModelArgs::positional)
      .field("layerNorm", &ModelArgs::layerNorm)
      .field("mlp", &ModelArgs::mlp)
      .field("tied", &ModelArgs::tied)
      .field("bias", &ModelArgs::bias)
      .field("gelu", &ModelArgs::gelu)
      .field("seed", &ModelArgs::seed);
#if ATTN_BINDINGS_TRAINING
  emscripten::value_object<TrainerArgs>("TrainerArgs")
      .field("task", &TrainerArgs::task)
      .field("lr", &TrainerArgs::lr)
      .field("batch", &TrainerArgs::batch)
      .field("weightDecay", &TrainerArgs::weightDecay)
      .field("clip", &TrainerArgs::clip)
      .field("seed", &TrainerArgs::seed)
      .field("beta1", &TrainerArgs::beta1)
      .field("beta2", &TrainerArgs::beta2)
      .field("eps", &TrainerArgs::eps)
      .field("warmup", &TrainerArgs::warmup)
      .field("totalSteps", &TrainerArgs::totalSteps)
      .field("minLr", &TrainerArgs::minLr)
      .field("heldOut", &TrainerArgs::heldOut);
#endif
  // Forward, weights and traces: every build. Training, scores and checkpoints: not in the
  // element's module (ATTN_BINDINGS_TRAINING=0, CMakeLists.txt's attention_lens_embed).
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
          .function("stepCount", &ModelHandle::stepCount)
          .function("step", &ModelHandle::step)
          .function("saveSafetensors", &ModelHandle::saveSafetensors)
          .function("loadSafetensors", &ModelHandle::loadSafetensors);
#if ATTN_BINDINGS_TRAINING
  model.function("gradient", &ModelHandle::gradient)
      .function("lossAndGradients", &ModelHandle::lossAndGradients)
      .function("probe", &ModelHandle::probe)
      .function("headScores", &ModelHandle::headScores)
      .function("headAblation", &ModelHandle::headAblation);
  emscripten::class_<CheckpointHandle>("CheckpointHandle")
      .constructor<>()
      .function("headBytes", &CheckpointHandle::headBytes)
      .function("begin", &CheckpointHandle::begin)
      .function("tokenizerNeed", &CheckpointHandle::tokenizerNeed)
      .function("buffer", &CheckpointHandle::buffer)
      .function("read", &CheckpointHandle::read)
      .function("finish", &CheckpointHandle::finish);
  emscripten::class_<BpeHandle>("BpeHandle")
      .constructor<>()
      .function("configure", &BpeHandle::configure)
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
#endif  // ATTN_BINDINGS_TRAINING
  emscripten::class_<LayerHandle>("LayerHandle")
      .constructor<>()
      .function("configure", &LayerHandle::configure)
      .function("headDim", &LayerHandle::headDim)
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
}
