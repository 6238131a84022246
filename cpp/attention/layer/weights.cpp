// Layer weights: shapes, seeded init, validation, lookup by name, magnitudes (see weights.hpp).
#include "attention/layer/weights.hpp"

#include <cmath>

#include "attention/error.hpp"
#include "attention/ops/finite_scan.hpp"
#include "attention/rng.hpp"

namespace attn {

namespace {

std::string str(std::size_t value) {
  return std::to_string(value);
}

void require_size(std::span<const float> values, std::size_t count, const std::string& shape,
                  const std::string& name) {
  if (values.size() != count) {
    throw Error(name + " has " + str(values.size()) + " values, expected " + shape + " = " +
                str(count));
  }
}

void require_empty(std::span<const float> values, const std::string& name, const std::string& why) {
  if (!values.empty()) throw Error(name + " was given, but " + why);
}

constexpr const char* kNames[] = {"in_proj_weight", "in_proj_bias", "out_proj.weight",
                                  "out_proj.bias"};

}  // namespace

std::vector<WeightTensor> weight_tensors(const WeightShape& s) {
  std::vector<WeightTensor> tensors = {
      {kNames[0], {3 * s.inner, s.d_model}, &LayerWeights::in_proj_weight}};
  if (s.bias) tensors.push_back({kNames[1], {3 * s.inner}, &LayerWeights::in_proj_bias});
  if (s.out_proj) {
    tensors.push_back({kNames[2], {s.d_model, s.inner}, &LayerWeights::out_proj_weight});
  }
  if (s.bias && s.out_proj) {
    tensors.push_back({kNames[3], {s.d_model}, &LayerWeights::out_proj_bias});
  }
  return tensors;
}

const std::vector<float>& weight_by_name(const LayerWeights& weights, std::string_view name) {
  if (name == kNames[0]) return weights.in_proj_weight;
  if (name == kNames[1]) return weights.in_proj_bias;
  if (name == kNames[2]) return weights.out_proj_weight;
  if (name == kNames[3]) return weights.out_proj_bias;
  throw Error("unknown weight '" + std::string(name) + "'; the weights are: " + kNames[0] + ", " +
              kNames[1] + ", " + kNames[2] + ", " + kNames[3]);
}

std::span<const float> weight_by_name(const LayerWeightsView& weights, std::string_view name) {
  if (name == kNames[0]) return weights.in_proj_weight;
  if (name == kNames[1]) return weights.in_proj_bias;
  if (name == kNames[2]) return weights.out_proj_weight;
  if (name == kNames[3]) return weights.out_proj_bias;
  return weight_by_name(LayerWeights{}, name);  // throws, naming the four
}

LayerWeightsView view_of(const LayerWeights& weights) {
  return {weights.in_proj_weight, weights.in_proj_bias, weights.out_proj_weight,
          weights.out_proj_bias};
}

LayerWeights seeded_weights(const WeightShape& s, std::uint32_t seed) {
  LayerWeights init;
  NumpyRandomState rng(seed);
  init.in_proj_weight.resize(3 * s.inner * s.d_model);
  const double xavier = std::sqrt(6.0 / double(s.d_model + 3 * s.inner));
  rng.fill_uniform(init.in_proj_weight, -xavier, xavier);
  if (s.out_proj) {
    init.out_proj_weight.resize(s.d_model * s.inner);
    const double bound = 1.0 / std::sqrt(double(s.inner));
    rng.fill_uniform(init.out_proj_weight, -bound, bound);
  }
  if (s.bias) {
    const double bound = 1.0 / std::sqrt(double(s.d_model));
    init.in_proj_bias.resize(3 * s.inner);
    rng.fill_uniform(init.in_proj_bias, -bound, bound);
    if (s.out_proj) {
      init.out_proj_bias.resize(s.d_model);
      rng.fill_uniform(init.out_proj_bias, -bound, bound);
    }
  }
  return init;
}

void validate_weights(const LayerWeightsView& weights, const WeightShape& s) {
  const std::vector<WeightTensor> present = weight_tensors(s);
  // Checked in the order in_proj_weight, out_proj.weight, in_proj_bias, out_proj.bias.
  for (const char* name : {kNames[0], kNames[2], kNames[1], kNames[3]}) {
    const std::span<const float> values = weight_by_name(weights, name);
    const WeightTensor* tensor = nullptr;
    for (const auto& t : present) {
      if (t.name == name) tensor = &t;
    }
    if (tensor == nullptr) {
      if (!s.bias && name != kNames[2]) {
        require_empty(values, name, "the layer was created with bias: false");
      } else if (!s.out_proj && name == kNames[2]) {
        require_empty(values, name, "the layer was created without an output projection");
      }
      continue;
    }
    const bool matrix = tensor->shape.size() == 2;
    const std::size_t rows = matrix ? tensor->shape[0] : 1;
    const std::size_t cols = tensor->shape.back();
    require_size(values, rows * cols, "[" + str(rows) + ", " + str(cols) + "]", name);
    require_finite(values, name);
  }
}

void require_finite(std::span<const float> values, const std::string& name) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      throw Error(name + "[" + str(i) + "] is " + (std::isnan(values[i]) ? "NaN" : "infinite") +
                  ": values must be finite");
    }
  }
}

WeightMagnitudes weight_magnitudes(const LayerWeightsView& w, const WeightShape& s) {
  const std::size_t block = s.inner * s.d_model;
  const std::span<const float> in(w.in_proj_weight);
  const std::span<const float> bias(w.in_proj_bias);
  auto bias_block = [&](std::size_t b) {
    return bias.empty() ? 0.0f : finite_scan(bias.subspan(b * s.inner, s.inner)).max_abs;
  };
  WeightMagnitudes m;
  m.q_weight = finite_scan(in.subspan(0, block)).max_abs;
  m.k_weight = finite_scan(in.subspan(block, block)).max_abs;
  m.v_weight = finite_scan(in.subspan(2 * block, block)).max_abs;
  m.q_bias = bias_block(0);
  m.k_bias = bias_block(1);
  m.v_bias = bias_block(2);
  m.out_weight = finite_scan(w.out_proj_weight).max_abs;
  m.out_bias = finite_scan(w.out_proj_bias).max_abs;
  return m;
}

}  // namespace attn
