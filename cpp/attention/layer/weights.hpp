// One attention layer's weights: their nn.MultiheadAttention layout, shapes, seeded
// initialisation, validation, lookup by state_dict name, and their largest magnitudes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

// Weights in nn.MultiheadAttention layout (inner = heads · head_dim; = d_model by default),
// extended to grouped-query attention (kv_inner = kv_heads · head_dim; = inner by default):
// Q = X·W_qᵀ + b_q with W_q = in_proj_weight rows [0, inner), W_k the next kv_inner rows, W_v
// the last kv_inner (a Llama-family checkpoint's q_proj, k_proj, v_proj stacked).
struct LayerWeights {
  std::vector<float> in_proj_weight;   // [inner + 2·kv_inner, d_model]
  std::vector<float> in_proj_bias;     // [inner + 2·kv_inner], empty without bias
  std::vector<float> out_proj_weight;  // [d_model, inner], empty without out_proj
  std::vector<float> out_proj_bias;    // [d_model], empty without an output bias or out_proj
  // The q/k norms' weights (LayerConfig::qk_norm): [head_dim] each per head, [inner] and
  // [kv_inner] over the whole projection; empty without q/k norms.
  std::vector<float> q_norm, k_norm;
};

// Read-only views of one layer's four tensors, laid out as LayerWeights: the layer's own, or a
// block of a Model's parameter buffer (no copy). What the forward and the explanations read.
struct LayerWeightsView {
  std::span<const float> in_proj_weight;   // [inner + 2·kv_inner, d_model]
  std::span<const float> in_proj_bias;     // [inner + 2·kv_inner], empty without bias
  std::span<const float> out_proj_weight;  // [d_model, inner], empty without out_proj
  std::span<const float> out_proj_bias;    // [d_model], empty without an output bias or out_proj
  // The q/k norms' weights (LayerConfig::qk_norm): [head_dim] each per head, [inner] and
  // [kv_inner] over the whole projection; empty without.
  std::span<const float> q_norm, k_norm;
};
LayerWeightsView view_of(const LayerWeights& weights);

// What the weights of one layer must look like.
struct WeightShape {
  std::size_t d_model = 0;
  std::size_t heads = 0;
  std::size_t inner = 0;  // heads · head_dim: W_q's rows, W_O's columns
  bool bias = true;       // in_proj_bias
  bool out_proj = true;
  std::size_t kv_inner = 0;  // kv_heads · head_dim: W_k's (and W_v's) rows; 0 means inner
  bool out_bias = true;      // out_proj.bias (only with out_proj)
  // The q/k norms' widths (head_dim per head, inner and kv_inner over the whole projection; 0
  // without q/k norms), and whether their weight is Gemma's 1 + w (seeded at 0, else at 1).
  std::size_t q_norm = 0, k_norm = 0;
  bool qk_norm_one_plus = false;

  std::size_t kv_rows() const { return kv_inner == 0 ? inner : kv_inner; }
  std::size_t in_rows() const { return inner + 2 * kv_rows(); }  // in_proj_weight's rows
  bool has_out_bias() const { return out_proj && out_bias; }
};

// A tensor of a layer by its PyTorch state_dict name, with its shape.
struct WeightTensor {
  // "in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias", "q_norm.weight",
  // "k_norm.weight"
  const char* name;
  std::vector<std::size_t> shape;
  std::vector<float> LayerWeights::*member;
};

// The tensors a layer of this shape has, in state_dict order.
std::vector<WeightTensor> weight_tensors(const WeightShape& shape);

// The tensor named `name` (one of the six state_dict names); throws attn::Error naming the
// known names for any other.
const std::vector<float>& weight_by_name(const LayerWeights& weights, std::string_view name);
std::span<const float> weight_by_name(const LayerWeightsView& weights, std::string_view name);

// in_proj Xavier-uniform (fan_out = inner + 2·kv_inner) and out_proj uniform(±1/√inner) as
// PyTorch does, biases uniform(±1/√d_model) (PyTorch starts them at zero; nonzero shows their
// role), from `seed`, drawn in that order (in_proj_weight, out_proj.weight, in_proj_bias,
// out_proj.bias; absent tensors draw nothing). The q/k norms start as the identity, as PyTorch's
// RMSNorm does (weights 1; Gemma's 1 + w at 0), drawing nothing.
LayerWeights seeded_weights(const WeightShape& shape, std::uint32_t seed);

// Every size (naming the tensor and the expected shape) and that all values are finite.
void validate_weights(const LayerWeightsView& weights, const WeightShape& shape);

// Throws attn::Error naming the first NaN or infinity: "<name>[i] is NaN: values must be finite".
void require_finite(std::span<const float> values, const std::string& name);

// Largest |value| of each block (0 for an absent one): the forward's float32 range check.
struct WeightMagnitudes {
  float q_weight = 0, k_weight = 0, v_weight = 0;  // blocks of in_proj_weight (W_q, W_k, W_v)
  float q_bias = 0, k_bias = 0, v_bias = 0;        // blocks of in_proj_bias
  float out_weight = 0, out_bias = 0;
};
WeightMagnitudes weight_magnitudes(const LayerWeightsView& weights, const WeightShape& shape);

}  // namespace attn
