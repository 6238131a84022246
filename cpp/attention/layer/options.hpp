// A layer's configuration and one forward's options, with their defaults: the one source of
// the defaults (the JS API reads them through lens.catalog.defaults).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "attention/fields.hpp"
#include "attention/ops/rmsnorm.hpp"
#include "attention/ops/rope.hpp"
#include "attention/option_kinds.hpp"

namespace attn {

struct LayerConfig {
  std::size_t d_model = 64;
  std::size_t heads = 4;
  std::size_t head_dim = 0;  // d_k; 0 means d_model / heads (which must then divide d_model)
  // Key/value heads (grouped-query attention): 0 means heads (multi-head attention); otherwise
  // it must divide heads, and query head h reads key/value head h / (heads / kv_heads) (1:
  // multi-query attention). in_proj_weight is then [(heads + 2·kv_heads)·d_k, d_model].
  std::size_t kv_heads = 0;
  bool bias = true;  // in_proj_bias (the q, k and v biases)
  // out_proj.bias; unset: as `bias` (Qwen2: bias true, out_bias false). Only with out_proj.
  std::optional<bool> out_bias;
  bool out_proj = true;  // false: the output is the concatenated heads (no W_O)
  PositionalKind positional = PositionalKind::None;
  // With positional Rope: how q and k turn (pairing, base, optional per-pair frequencies). The
  // default is the walkthrough's interleaved pairs with base 10000; a non-default spec without
  // positional Rope is refused.
  RopeSpec rope;
  // The scores' factor: 0 for 1/√d_k; a checkpoint block's own (Gemma's query_pre_attn_scalar^−½,
  // Model::trace). ForwardOptions::scale false still turns scaling off.
  double scale = 0.0;
  // > 0: the scaled scores soft-capped to softcap·tanh(s/softcap) before the mask (a checkpoint
  // block's attn_logit_softcapping: Gemma 2).
  double softcap = 0.0;
  // q/k norms before RoPE (a checkpoint block's: Qwen3 and Gemma 3 per head, OLMo 2 over the
  // whole projection): RMSNorm with the weights' q_norm and k_norm (the layer's own, or a model
  // block's it borrows), its weight form (Gemma's 1 + w) and ε.
  QkNorm qk_norm = QkNorm::None;
  RmsNormWeight qk_norm_weight = RmsNormWeight::Plain;
  double qk_norm_eps = 1e-6;
  std::uint32_t seed = 42;  // seeded initialisation of weights and tables
};

// The key/value heads of a config (kv_heads, or heads for 0).
inline std::size_t kv_heads_of(const LayerConfig& config) {
  return config.kv_heads == 0 ? config.heads : config.kv_heads;
}
// Whether the layer has out_proj.bias.
inline bool has_out_bias(const LayerConfig& config) {
  return config.out_proj && config.out_bias.value_or(config.bias);
}

struct ForwardOptions {
  std::size_t n = 0;          // queries
  bool cross = false;         // keys and values from kv (else from x: self-attention)
  std::span<const float> kv;  // cross-attention source [kv_n, d_model]
  std::size_t kv_n = 0;       // source length (cross-attention only)
  MaskSpec mask;
  bool scale = true;         // divide scores by √d_k
  bool want_weights = true;  // fill ForwardResult::attention (else: the flash path, unless traced)
  bool want_trace = false;   // fill ForwardResult::trace
  int trace_head = -1;       // with want_trace: per-head steps of this head only (-1: every head)
  // > 0: fill ForwardResult::preview with every head's weights max-pooled to at most
  // preview_side × preview_side (for drawing long inputs small, without returning the weights).
  std::size_t preview_side = 0;
};

// createLayer's options (LayerConfig) and a forward's scalar options (ForwardOptions: the mask by
// name with its window and prefix, scaling, what to return), by their JS API names (fields.hpp).
template <class Visitor>
void visit_fields(RopeSpec& rope, Visitor& v) {
  v.choice("pairing", rope.pairing, rope_pairings(), parse_rope_pairing);
  v.number("base", rope.base);
  v.numbers("frequencies", rope.frequencies, "θ per pair");
  v.count("rotaryDims", rope.rotary_dims, 0, kFieldDimMax);
}
template <class Visitor>
void visit_fields(LayerConfig& c, Visitor& v) {
  v.count("dModel", c.d_model, 1, kFieldDimMax);
  v.count("heads", c.heads, 1, kFieldDimMax);
  v.count("headDim", c.head_dim, 0, kFieldDimMax);
  v.count("kvHeads", c.kv_heads, 0, kFieldDimMax);
  v.boolean("bias", c.bias);
  v.optional_boolean("outBias", c.out_bias);
  v.boolean("outProj", c.out_proj);
  v.choice("positional", c.positional, positional_kinds(), parse_positional_kind);
  v.object("rope", c.rope);
  v.number("scale", c.scale);
  v.number("softcap", c.softcap);
  v.choice("qkNorm", c.qk_norm, qk_norm_kinds(), parse_qk_norm);
  v.choice("qkNormWeight", c.qk_norm_weight, rms_norm_weights(), parse_rms_norm_weight);
  v.number("qkNormEps", c.qk_norm_eps);
  v.count("seed", c.seed, 0, kFieldSizeMax);
}
template <class Visitor>
void visit_fields(ForwardOptions& o, Visitor& v) {
  v.choice("mask", o.mask.kind, mask_kinds(), parse_mask_kind);
  v.count("window", o.mask.window, 0, kFieldDimMax);
  v.count("prefix", o.mask.prefix, 0, kFieldDimMax);
  v.boolean("scale", o.scale);
  v.boolean("weights", o.want_weights);
  v.boolean("trace", o.want_trace);
  v.count("traceHead", o.trace_head, -1, kFieldDimMax);
  v.count("preview", o.preview_side, 0, kFieldDimMax);
}

// The factor the scores are multiplied by: 1/√d_k, or 1 with scaling off.
inline float score_scale(std::size_t head_dim, bool scale) {
  return scale ? float(1.0 / std::sqrt(double(head_dim))) : 1.0f;
}
// A layer's factor: its config's scale when it has one, else 1/√d_k; 1 with scaling off.
inline float score_scale(const LayerConfig& config, std::size_t head_dim, bool scale) {
  return scale && config.scale != 0.0 ? float(config.scale) : score_scale(head_dim, scale);
}

}  // namespace attn
