// Embind bindings: marshals JS values to the core and back. No math and no policy here:
// every check and every message comes from the core; C++ errors become returned strings that
// the JS API (web/api/attention-lens-api.js) throws as Error, so the module keeps working.
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
#include "attention/tokenizer.hpp"

using emscripten::val;

namespace {

// Runs `body`; returns "" on success or the error's message.
template <class Body>
std::string guarded(Body&& body) {
  try {
    body();
    return {};
  } catch (const std::bad_alloc&) {
    return "out of memory: the request needs more memory than the page can have";
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unexpected internal error";
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

struct ConfigArgs {
  std::size_t dModel = 64;
  std::size_t heads = 4;
  std::size_t headDim = 0;
  bool bias = true;
  bool outProj = true;
  std::string positional = "none";
  std::uint32_t seed = 42;
};

struct ForwardArgs {
  std::size_t n = 0;
  bool cross = false;
  std::size_t kvN = 0;
  std::string mask = "none";
  std::size_t window = 0;
  std::size_t prefix = 0;
  bool scale = true;
  bool weights = true;
  bool trace = false;
  int traceHead = -1;
  std::size_t preview = 0;
};

class LayerHandle {
 public:
  std::string configure(const ConfigArgs& args) {
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
    });
  }

  std::size_t headDim() const { return layer_->head_dim(); }
  std::size_t outputDim() const { return layer_->output_dim(); }

  std::string setWeights(val in_w, val in_b, val out_w, val out_b) {
    return guarded([&] {
      attn::LayerWeights weights;
      weights.in_proj_weight = vector_or_empty<float>(in_w);
      weights.in_proj_bias = vector_or_empty<float>(in_b);
      weights.out_proj_weight = vector_or_empty<float>(out_w);
      weights.out_proj_bias = vector_or_empty<float>(out_b);
      layer_->set_weights(std::move(weights));
    });
  }

  // name: in_proj_weight | in_proj_bias | out_proj.weight | out_proj.bias
  val weight(const std::string& name) const {
    const auto& w = layer_->weights();
    const std::vector<float>& v = name == "in_proj_weight"    ? w.in_proj_weight
                                  : name == "in_proj_bias"    ? w.in_proj_bias
                                  : name == "out_proj.weight" ? w.out_proj_weight
                                                              : w.out_proj_bias;
    return view_of(v.data(), v.size());
  }

  std::string loadSafetensors(val bytes) {
    return guarded([&] { layer_->load_safetensors(vector_or_empty<std::uint8_t>(bytes)); });
  }

  std::string saveSafetensors() {
    return guarded([&] { bytes_ = layer_->save_safetensors(); });
  }
  val savedBytes() const { return view_of(bytes_.data(), bytes_.size()); }

  std::string embed(val ids) {
    return guarded([&] {
      const auto id_values = vector_or_empty<std::uint32_t>(ids);
      const std::size_t d = layer_->config().d_model;
      embedded_.resize(id_values.size(), d);
      embedding_table_->lookup(id_values, embedded_);
    });
  }
  val embedded() const { return view_of(embedded_.data(), embedded_.size()); }

  std::string forward(val x, val kv, const ForwardArgs& args, val key_padding, val cells) {
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
  val step(std::size_t index) const {
    const attn::Step& s = result_->trace.steps.at(index);
    val shape = val::array();
    for (auto extent : s.shape) shape.call<void>("push", extent);
    val out = val::object();
    out.set("id", s.id);
    out.set("title", s.title);
    out.set("equation", s.equation);
    out.set("shape", shape);
    out.set("head", s.head);
    out.set("rows", s.rows);
    out.set("cols", s.cols);
    out.set("data", view_of(s.data.data(), s.data.size()));
    return out;
  }

  // One cell of the last traced forward explained: {step, head, row, col, value, summary,
  // equation, leftLabel, rightLabel, quantities: [{name, latex, value}], termIndex, termLeft,
  // termRight, termProduct} (the term columns are views the JS API copies at once), or the
  // error's message as a string.
  val explain(const std::string& step, int head, std::size_t row, std::size_t col) {
    val out = val::object();
    const std::string error = guarded([&] {
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
    });
    return error.empty() ? out : val(error);
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

// The result of numpyRandn, read by the JS API right after each call.
std::vector<double> randn_result;

std::string numpyRandn(std::uint32_t seed, std::size_t count) {
  return guarded([&] {
    randn_result.assign(count, 0.0);
    attn::NumpyRandomState(seed).fill_randn(randn_result);
  });
}
val randnResult() {
  return view_of(randn_result.data(), randn_result.size());
}

// Returns {tokens: string[], ids: number[]} or {error: string}.
val tokenize(const std::string& text, const std::string& mode) {
  val result = val::object();
  const std::string error = guarded([&] {
    if (mode != "word" && mode != "char") {
      throw attn::Error("unknown tokenizer '" + mode + "': expected 'word' or 'char'");
    }
    const auto tokens = attn::tokenize(
        text, mode == "word" ? attn::TokenizerKind::Word : attn::TokenizerKind::Character);
    val texts = val::array();
    val ids = val::array();
    for (const auto& token : tokens) {
      texts.call<void>("push", token.text);
      ids.call<void>("push", attn::token_id(token.text, attn::kVocabularySize));
    }
    result.set("tokens", texts);
    result.set("ids", ids);
  });
  if (!error.empty()) result.set("error", error);
  return result;
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
      .function("savedBytes", &LayerHandle::savedBytes)
      .function("embed", &LayerHandle::embed)
      .function("embedded", &LayerHandle::embedded)
      .function("forward", &LayerHandle::forward)
      .function("output", &LayerHandle::output)
      .function("attention", &LayerHandle::attention)
      .function("preview", &LayerHandle::preview)
      .function("stepCount", &LayerHandle::stepCount)
      .function("step", &LayerHandle::step)
      .function("explain", &LayerHandle::explain);
  emscripten::function("numpyRandn", &numpyRandn);
  emscripten::function("randnResult", &randnResult);
  emscripten::function("tokenize", &tokenize);
  emscripten::function("simdArch", &simdArch);
  emscripten::function("heapInUse", &heapInUse);
}
