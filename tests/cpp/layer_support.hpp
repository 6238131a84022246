// Test helpers around AttentionLayer: running the scalar reference on a layer's own weights.
#pragma once

#include <vector>

#include "attention/layer/layer.hpp"
#include "attention/layer/layer_reference.hpp"

// The reference forward for `layer` with the same weights, inputs and options.
inline attn::reference::MhaOutputs reference_forward(const attn::AttentionLayer& layer,
                                                     const std::vector<float>& x,
                                                     const attn::ForwardOptions& options) {
  const auto& config = layer.config();
  const auto& w = layer.weights();
  attn::reference::MhaInputs in;
  in.d_model = config.d_model;
  in.heads = config.heads;
  in.head_dim = layer.head_dim();
  in.n = options.n;
  in.kv_n = options.cross ? options.kv_n : options.n;
  in.x = x.data();
  in.kv = options.cross ? options.kv.data() : x.data();
  in.in_proj_weight = w.in_proj_weight.data();
  in.in_proj_bias = config.bias ? w.in_proj_bias.data() : nullptr;
  in.out_proj_weight = config.out_proj ? w.out_proj_weight.data() : nullptr;
  in.out_proj_bias = config.bias && config.out_proj ? w.out_proj_bias.data() : nullptr;
  in.mask = &options.mask;
  in.scale = options.scale;
  static thread_local std::vector<float> slopes;
  if (config.positional == attn::PositionalKind::Alibi) {
    slopes = attn::alibi_slopes(config.heads);
    in.alibi_slopes = slopes.data();
  }
  return attn::reference::multi_head_attention(in);
}
