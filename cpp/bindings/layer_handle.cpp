// LayerHandle's bindings: JS options and arrays to an AttentionLayer's calls, its results back.
#include "bindings/layer_handle.hpp"

#include <utility>

#include "attention/layer/explain.hpp"
#include "bindings/fields.hpp"

namespace attn::bindings {

val LayerHandle::configure(val options) {
  return guarded([&] {
    const attn::LayerConfig config = read_fields<attn::LayerConfig>(options);
    layer_ = std::make_unique<attn::AttentionLayer>(config);
    embedding_table_ = std::make_unique<attn::EmbeddingTable>(config.seed, config.d_model);
    return val::undefined();
  });
}

val LayerHandle::setWeights(val in_w, val in_b, val out_w, val out_b, val q_norm, val k_norm) {
  return guarded([&] {
    attn::LayerWeights weights;
    weights.in_proj_weight = vector_or_empty<float>(in_w);
    weights.in_proj_bias = vector_or_empty<float>(in_b);
    weights.out_proj_weight = vector_or_empty<float>(out_w);
    weights.out_proj_bias = vector_or_empty<float>(out_b);
    weights.q_norm = vector_or_empty<float>(q_norm);
    weights.k_norm = vector_or_empty<float>(k_norm);
    layer_->set_weights(std::move(weights));
    return val::undefined();
  });
}

val LayerHandle::weight(const std::string& name) const {
  return guarded([&] {
    const std::vector<float>& v = attn::weight_by_name(layer_->weights(), name);
    return view_of(v.data(), v.size());
  });
}

val LayerHandle::loadSafetensors(val bytes) {
  return guarded([&] {
    layer_->load_safetensors(vector_or_empty<std::uint8_t>(bytes));
    return val::undefined();
  });
}

val LayerHandle::saveSafetensors() {
  return guarded([&] {
    bytes_ = layer_->save_safetensors();
    return view_of(bytes_.data(), bytes_.size());
  });
}

val LayerHandle::embed(val ids) {
  return guarded([&] {
    const auto id_values = vector_or_empty<std::uint32_t>(ids);
    embedded_.resize(id_values.size(), layer_->config().d_model);
    embedding_table_->lookup(id_values, embedded_);
    return view_of(embedded_.data(), embedded_.size());
  });
}

val LayerHandle::forward(val x, val kv, val args, val key_padding, val cells) {
  return guarded([&] {
    const auto x_values = vector_or_empty<float>(x);
    const auto kv_values = vector_or_empty<float>(kv);
    attn::ForwardOptions options = read_fields<attn::ForwardOptions>(args);
    options.n = args["n"].as<std::size_t>();
    options.cross = args["cross"].as<bool>();
    options.kv = kv_values;
    options.kv_n = args["kvN"].as<std::size_t>();
    options.mask.key_padding = vector_or_empty<std::uint8_t>(key_padding);
    options.mask.cells = vector_or_empty<std::uint8_t>(cells);
    result_ = &layer_->forward(x_values, options);
    return val::undefined();
  });
}

val LayerHandle::preview() const {
  const attn::WeightsPreview& p = result_->preview;
  val out = val::object();
  out.set("step", p.step);
  out.set("rows", p.rows);
  out.set("cols", p.cols);
  out.set("data", view_of(p.values.data(), p.values.size()));
  return out;
}

val LayerHandle::explain(const std::string& step, int head, std::size_t row, std::size_t col) {
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
    out.set("quantities", array_of(e.quantities, [](const auto& q) {
              val quantity = val::object();
              quantity.set("name", q.name);
              quantity.set("latex", q.latex);
              quantity.set("value", q.value);
              return quantity;
            }));
    // Views last: nothing may allocate between creating them and the JS API's copies.
    out.set("termIndex", view_of(term_index_.data(), term_index_.size()));
    out.set("termLeft", view_of(term_left_.data(), term_left_.size()));
    out.set("termRight", view_of(term_right_.data(), term_right_.size()));
    out.set("termProduct", view_of(term_product_.data(), term_product_.size()));
    return out;
  });
}

}  // namespace attn::bindings
