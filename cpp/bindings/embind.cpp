// Embind bindings: marshals JS values to the core and back. No math and no policy here: every
// check, default and message comes from the core.
//
// One error convention: every fallible binding returns a val that is either its result
// (undefined when it has none) or { error: message }, never throws into JS; the JS API
// (web/api/attention-lens-api.js) passes each through one unwrap() that throws
// new Error(message), so the module keeps working after any bad input. Results never carry an
// `error` key. Views into wasm memory (typed_memory_view) are copied by the JS API at once.
#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <memory>
#include <new>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/explain.hpp"
#include "attention/layer.hpp"
#include "attention/ops/embedding.hpp"
#include "attention/ops/simd.hpp"
#include "attention/rng.hpp"
#include "attention/step_text.hpp"
#include "attention/steps.hpp"
#include "attention/tokenizer.hpp"

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
  val defaults = val::object();
  defaults.set("layer", layer);
  defaults.set("forward", forward);
  val limits = val::object();
  limits.set("maxModelDim", attn::kMaxModelDim);
  limits.set("maxHeads", attn::kMaxHeads);
  limits.set("maxSequence", attn::kMaxSequence);
  limits.set("maxScoreValues", attn::kMaxScoreValues);
  limits.set("maxTraceValues", attn::kMaxTraceValues);
  limits.set("maxTokens", attn::kMaxTokens);
  limits.set("vocabularySize", attn::kVocabularySize);
  val out = val::object();
  out.set("steps", steps);
  out.set("positional", name_list(attn::positional_kinds()));
  out.set("masks", name_list(attn::mask_kinds()));
  out.set("tokenizers", name_list(attn::tokenizer_kinds()));
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
  // {id, title, equation, shape, head, rows, cols, data}: the id and axes from the catalog, the
  // title and equation rendered by the core for this layer and forward.
  val step(std::size_t index) const {
    const attn::Step& s = result_->trace.steps.at(index);
    const attn::StepInfo& info = attn::step_info(s.kind);
    const attn::StepText text = attn::step_text(*layer_, s);
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
  emscripten::function("simdArch", &simdArch);
  emscripten::function("heapInUse", &heapInUse);
}
