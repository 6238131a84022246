// LayerHandle: one AttentionLayer for JS (createLayer): weights, forward, traced steps, explain.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attention/layer/layer.hpp"
#include "attention/ops/embedding.hpp"
#include "bindings/common.hpp"

namespace attn::bindings {

class LayerHandle {
 public:
  // createLayer's options, read by LayerConfig's field list (the JS API filled its defaults).
  val configure(val options);

  std::size_t headDim() const { return layer_->head_dim(); }
  std::size_t kvHeads() const { return layer_->kv_heads(); }
  bool outBias() const { return attn::has_out_bias(layer_->config()); }
  std::size_t outputDim() const { return layer_->output_dim(); }

  val setWeights(val in_w, val in_b, val out_w, val out_b, val q_norm, val k_norm);
  // A view of the tensor with this state_dict name (an unknown name is an error).
  val weight(const std::string& name) const;
  val loadSafetensors(val bytes);
  val saveSafetensors();
  val embed(val ids);
  // options: ForwardOptions' fields (fields.hpp) and n, cross, kvN.
  val forward(val x, val kv, val options, val key_padding, val cells);

  val output() const { return view_of(result_->output.data(), result_->output.size()); }
  val attention() const { return view_of(result_->attention.data(), result_->attention.size()); }
  // {step, rows, cols, data}: every head's weights max-pooled (data a view the JS API copies).
  val preview() const;
  std::size_t stepCount() const { return result_ ? result_->trace.steps.size() : 0; }
  // One traced step (step_value).
  val step(std::size_t index) const { return step_value(*layer_, result_->trace.steps.at(index)); }

  // One cell of the last traced forward explained: {step, head, row, col, value, summary,
  // equation, leftLabel, rightLabel, quantities: [{name, latex, value}], termIndex, termLeft,
  // termRight, termProduct} (the term columns are views the JS API copies at once).
  val explain(const std::string& step, int head, std::size_t row, std::size_t col);

 private:
  std::unique_ptr<attn::AttentionLayer> layer_;
  const attn::ForwardResult* result_ = nullptr;
  std::unique_ptr<attn::EmbeddingTable> embedding_table_;  // rows kept across embed() calls
  attn::Matrix embedded_;
  std::vector<std::uint8_t> bytes_;
  std::vector<std::uint32_t> term_index_;
  std::vector<float> term_left_, term_right_, term_product_;
};

}  // namespace attn::bindings
