// Test support: a published checkpoint's tensor listing (transformers' state_dict names, shapes
// from the config, the published dtype) and a .safetensors header for it, without the weights.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attention/model/model_config.hpp"

namespace {

// One tensor of a published checkpoint: its name, dtype and shape.
struct Listed {
  std::string name;
  std::string dtype;
  std::vector<std::size_t> shape;
};
using Listing = std::vector<Listed>;

std::string layer_prefix(const char* stem, std::size_t l) {
  return stem + std::to_string(l) + ".";
}

std::uint64_t bytes_per_value(const std::string& dtype) {
  if (dtype == "U8") return 1;
  if (dtype == "F16" || dtype == "BF16") return 2;
  return 4;  // F32
}

std::uint64_t values_of(const Listed& tensor) {
  std::uint64_t values = 1;
  for (const std::size_t s : tensor.shape) values *= s;
  return values;
}

// A .safetensors header for the listing, and the file's size.
std::pair<std::vector<std::uint8_t>, std::uint64_t> header_of(const Listing& tensors) {
  std::string json = "{\"__metadata__\":{\"format\":\"pt\"}";
  std::uint64_t offset = 0;
  for (const Listed& tensor : tensors) {
    const std::uint64_t bytes = values_of(tensor) * bytes_per_value(tensor.dtype);
    std::string shape;
    for (const std::size_t s : tensor.shape) {
      shape += (shape.empty() ? "" : ",") + std::to_string(s);
    }
    json += ",\"" + tensor.name + "\":{\"dtype\":\"" + tensor.dtype + "\",\"shape\":[" + shape +
            "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) +
            "]}";
    offset += bytes;
  }
  json += "}";
  std::vector<std::uint8_t> head(8);
  for (int i = 0; i < 8; ++i) head[i] = std::uint8_t(std::uint64_t(json.size()) >> (8 * i));
  head.insert(head.end(), json.begin(), json.end());
  return {head, head.size() + offset};
}

// The Llama-shaped state_dicts: the Llama family (pre-norms; Qwen2's q/k/v biases), Qwen3
// (pre-norms, per-head q/k norms), Gemma 2 and 3 (four norms per layer; Gemma 3's per-head q/k
// norms), OLMo 2 (norms after each sublayer only, q/k norms over the whole projection). lm_head
// when the file has one.
Listing published_llama_shaped(const attn::ModelConfig& c, const std::string& dtype,
                               attn::NormPlacement norms, attn::QkNorm qk_norm, bool lm_head,
                               bool qkv_bias = false) {
  const attn::AttentionShape shape = attn::attention_shape(c);
  const std::size_t d = c.d_model, q = shape.q_width(), kv = shape.kv_width();
  const std::size_t w = attn::mlp_width(c);
  Listing out{{"model.embed_tokens.weight", dtype, {c.vocab, d}}};
  for (std::size_t l = 0; l < c.layers; ++l) {
    const std::string p = layer_prefix("model.layers.", l);
    if (norms != attn::NormPlacement::Post) {
      out.push_back({p + "input_layernorm.weight", dtype, {d}});
    }
    out.push_back({p + "mlp.down_proj.weight", dtype, {d, w}});
    out.push_back({p + "mlp.gate_proj.weight", dtype, {w, d}});
    out.push_back({p + "mlp.up_proj.weight", dtype, {w, d}});
    out.push_back({p + "post_attention_layernorm.weight", dtype, {d}});
    if (norms != attn::NormPlacement::Pre) {
      out.push_back({p + "post_feedforward_layernorm.weight", dtype, {d}});
    }
    if (norms == attn::NormPlacement::Both) {
      out.push_back({p + "pre_feedforward_layernorm.weight", dtype, {d}});
    }
    if (qk_norm != attn::QkNorm::None) {
      const bool per_head = qk_norm == attn::QkNorm::PerHead;
      out.push_back({p + "self_attn.k_norm.weight", dtype, {per_head ? shape.head_dim : kv}});
    }
    if (qkv_bias) out.push_back({p + "self_attn.k_proj.bias", dtype, {kv}});
    out.push_back({p + "self_attn.k_proj.weight", dtype, {kv, d}});
    out.push_back({p + "self_attn.o_proj.weight", dtype, {d, q}});
    if (qk_norm != attn::QkNorm::None) {
      const bool per_head = qk_norm == attn::QkNorm::PerHead;
      out.push_back({p + "self_attn.q_norm.weight", dtype, {per_head ? shape.head_dim : q}});
    }
    if (qkv_bias) out.push_back({p + "self_attn.q_proj.bias", dtype, {q}});
    out.push_back({p + "self_attn.q_proj.weight", dtype, {q, d}});
    if (qkv_bias) out.push_back({p + "self_attn.v_proj.bias", dtype, {kv}});
    out.push_back({p + "self_attn.v_proj.weight", dtype, {kv, d}});
  }
  out.push_back({"model.norm.weight", dtype, {d}});
  if (lm_head) out.push_back({"lm_head.weight", dtype, {c.vocab, d}});
  return out;
}

}  // namespace
