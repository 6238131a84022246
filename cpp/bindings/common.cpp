// The bindings' shared helpers that are not templates: the error value, a step, a model config.
#include "bindings/common.hpp"

#include <string>

#include "attention/layer/layer.hpp"
#include "attention/layer/step_text.hpp"
#include "attention/layer/steps.hpp"
#include "attention/model/model.hpp"
#include "attention/ops/gelu.hpp"
#include "bindings/fields.hpp"

namespace attn::bindings {

val error_value(const char* message) {
  val out = val::object();
  out.set("error", std::string(message));
  return out;
}

val step_value(const attn::AttentionLayer& layer, const attn::Step& s) {
  const attn::StepInfo& info = attn::step_info(s.kind);
  const attn::StepText text = attn::step_text(layer, s);
  val out = val::object();
  out.set("id", std::string(info.id));
  out.set("title", text.title);
  out.set("equation", text.equation);
  out.set("shape", number_array(s.shape));
  out.set("head", s.head);
  out.set("rows", std::string(info.rows));
  out.set("cols", std::string(info.cols));
  out.set("data", view_of(s.data.data(), s.data.size()));
  return out;
}

val model_config_value(const attn::ModelConfig& config) {
  // createModel's options as this config has them (SmallModelOptions' field list), then what a
  // checkpoint's config.json switched on.
  val model = write_fields(attn::small_model_options(config));
  if (config.checkpoint) {  // what a checkpoint's config.json switched on, as the core reads it
    const attn::AttentionShape shape = attn::attention_shape(config);
    const attn::BlockConfig& block = config.blocks.front();
    model.set("kvHeads", shape.kv_heads);
    model.set("headDim", shape.head_dim);
    model.set("norm", std::string(attn::norm_name(config.norm)));
    model.set("mlpKind", std::string(attn::mlp_name(block)));
    model.set("mlpWidth", attn::mlp_width(config));
    model.set("window", block.window);
    // Each layer's own window (0: the layer attends to every earlier key): Gemma's local and
    // global layers differ, so the first block's window alone does not describe the model.
    val layer_windows = val::array();
    for (const attn::BlockConfig& b : config.blocks) layer_windows.call<void>("push", b.window);
    model.set("layerWindows", layer_windows);
    model.set(
        "rope", config.positional != attn::PositionalKind::Rope ? val::null() : [&] {
          val rope = val::object();
          rope.set("pairing", std::string(block.rope.pairing == attn::RopePairing::RotateHalf
                                              ? "rotate-half"
                                              : "interleaved"));
          rope.set("base", block.rope.base);
          rope.set("scaled", !block.rope.frequencies.empty());
          // Which rope_scaling (the full layers' in Gemma 3: its sliding ones are unscaled).
          attn::RopeScaling scaling = attn::RopeScaling::None;
          for (const attn::BlockConfig& b : config.blocks) {
            if (b.rope.scaling != attn::RopeScaling::None) scaling = b.rope.scaling;
          }
          rope.set("scaling", std::string(attn::rope_scaling_name(scaling)));
          rope.set("rotaryDims", block.rope.rotated(shape.head_dim));
          return rope;
        }());
  }
  return model;
}

}  // namespace attn::bindings
