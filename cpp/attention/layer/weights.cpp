// Layer weights: shapes, seeded init, validation, lookup by name, magnitudes (see weights.hpp).
#include "attention/layer/weights.hpp"

#include <cmath>
#include <tuple>

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

// The six tensors: their names and where each stands in LayerWeights and in LayerWeightsView.
struct WeightField {
  const char* name;
  std::vector<float> LayerWeights::*owned;
  std::span<const float> LayerWeightsView::*viewed;
};
constexpr WeightField kFields[] = {
    {"in_proj_weight", &LayerWeights::in_proj_weight, &LayerWeightsView::in_proj_weight},
    {"in_proj_bias", &LayerWeights::in_proj_bias, &LayerWeightsView::in_proj_bias},
    {"out_proj.weight", &LayerWeights::out_proj_weight, &LayerWeightsView::out_proj_weight},
    {"out_proj.bias", &LayerWeights::out_proj_bias, &LayerWeightsView::out_proj_bias},
    {"q_norm.weight", &LayerWeights::q_norm, &LayerWeightsView::q_norm},
    {"k_norm.weight", &LayerWeights::k_norm, &LayerWeightsView::k_norm}};

// The field named `name`; throws naming the six.
const WeightField& field_named(std::string_view name) {
  for (const WeightField& field : kFields) {
    if (name == field.name) return field;
  }
  std::string names;
  for (const WeightField& field : kFields) {
    names += std::string(names.empty() ? "" : ", ") + field.name;
  }
  throw Error("unknown weight '" + std::string(name) + "'; the weights are: " + names);
}

}  // namespace

std::vector<WeightTensor> weight_tensors(const WeightShape& s) {
  std::vector<WeightTensor> tensors;
  const auto add = [&](std::size_t field, std::vector<std::size_t> shape) {
    tensors.push_back({kFields[field].name, std::move(shape), kFields[field].owned});
  };
  add(0, {s.in_rows(), s.d_model});
  if (s.bias) add(1, {s.in_rows()});
  if (s.out_proj) add(2, {s.d_model, s.inner});
  if (s.has_out_bias()) add(3, {s.d_model});
  if (s.q_norm != 0) add(4, {s.q_norm});
  if (s.k_norm != 0) add(5, {s.k_norm});
  return tensors;
}

const std::vector<float>& weight_by_name(const LayerWeights& weights, std::string_view name) {
  return weights.*field_named(name).owned;
}

std::span<const float> weight_by_name(const LayerWeightsView& weights, std::string_view name) {
  return weights.*field_named(name).viewed;
}

LayerWeightsView view_of(const LayerWeights& weights) {
  LayerWeightsView view;
  for (const WeightField& field : kFields) view.*field.viewed = weights.*field.owned;
  return view;
}

LayerWeights seeded_weights(const WeightShape& s, std::uint32_t seed) {
  LayerWeights init;
  NumpyRandomState rng(seed);
  init.in_proj_weight.resize(s.in_rows() * s.d_model);
  const double xavier = std::sqrt(6.0 / double(s.d_model + s.in_rows()));
  rng.fill_uniform(init.in_proj_weight, -xavier, xavier);
  if (s.out_proj) {
    init.out_proj_weight.resize(s.d_model * s.inner);
    const double bound = 1.0 / std::sqrt(double(s.inner));
    rng.fill_uniform(init.out_proj_weight, -bound, bound);
  }
  const double bias_bound = 1.0 / std::sqrt(double(s.d_model));
  if (s.bias) {
    init.in_proj_bias.resize(s.in_rows());
    rng.fill_uniform(init.in_proj_bias, -bias_bound, bias_bound);
  }
  if (s.has_out_bias()) {
    init.out_proj_bias.resize(s.d_model);
    rng.fill_uniform(init.out_proj_bias, -bias_bound, bias_bound);
  }
  const float identity = s.qk_norm_one_plus ? 0.0f : 1.0f;  // the norm's weight that scales by 1
  init.q_norm.assign(s.q_norm, identity);
  init.k_norm.assign(s.k_norm, identity);
  return init;
}

void validate_weights(const LayerWeightsView& weights, const WeightShape& s) {
  const std::vector<WeightTensor> present = weight_tensors(s);
  // Checked in the order in_proj_weight, out_proj.weight, in_proj_bias, out_proj.bias.
  for (const char* name : {kFields[0].name, kFields[2].name, kFields[1].name, kFields[3].name}) {
    const std::span<const float> values = weight_by_name(weights, name);
    const WeightTensor* tensor = nullptr;
    for (const auto& t : present) {
      if (t.name == name) tensor = &t;
    }
    if (tensor == nullptr) {
      if (name == kFields[1].name) {
        require_empty(values, name, "the layer was created with bias: false");
      } else if (name == kFields[3].name && !s.bias && !s.out_bias) {
        require_empty(values, name, "the layer was created with bias: false");
      } else if (!s.out_proj) {
        require_empty(values, name, "the layer was created without an output projection");
      } else {  // out_proj.bias with out_bias false
        require_empty(values, name,
                      "the layer was created without an output bias (outBias: false)");
      }
      continue;
    }
    const bool matrix = tensor->shape.size() == 2;
    const std::size_t rows = matrix ? tensor->shape[0] : 1;
    const std::size_t cols = tensor->shape.back();
    require_size(values, rows * cols, "[" + str(rows) + ", " + str(cols) + "]", name);
    require_finite(values, name);
  }
  // The q/k norms: [head_dim] per head, or the whole projection's width.
  for (const auto& [values, width, name] :
       {std::tuple{weights.q_norm, s.q_norm, kFields[4].name},
        std::tuple{weights.k_norm, s.k_norm, kFields[5].name}}) {
    if (width == 0) {
      require_empty(values, name, "the layer was created without q/k norms (qkNorm: 'none')");
      continue;
    }
    if (values.size() != width) {
      const bool per_head = s.heads != 0 && s.q_norm == s.inner / s.heads;
      throw Error(std::string(name) + " has " + str(values.size()) + " values, expected " +
                  str(width) +
                  (per_head ? " (one head's width: the norm is per head)"
                            : " (the whole projection's width)"));
    }
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
  // Rows [0, inner) are W_q, the next kv rows W_k, the last kv rows W_v (biases likewise).
  const std::size_t d = s.d_model, q_rows = s.inner, kv_rows = s.kv_rows();
  const std::span<const float> in(w.in_proj_weight);
  const std::span<const float> bias(w.in_proj_bias);
  auto bias_block = [&](std::size_t first, std::size_t rows) {
    return bias.empty() ? 0.0f : finite_scan(bias.subspan(first, rows)).max_abs;
  };
  WeightMagnitudes m;
  m.q_weight = finite_scan(in.subspan(0, q_rows * d)).max_abs;
  m.k_weight = finite_scan(in.subspan(q_rows * d, kv_rows * d)).max_abs;
  m.v_weight = finite_scan(in.subspan((q_rows + kv_rows) * d, kv_rows * d)).max_abs;
  m.q_bias = bias_block(0, q_rows);
  m.k_bias = bias_block(q_rows, kv_rows);
  m.v_bias = bias_block(q_rows + kv_rows, kv_rows);
  m.out_weight = finite_scan(w.out_proj_weight).max_abs;
  m.out_bias = finite_scan(w.out_proj_bias).max_abs;
  return m;
}

}  // namespace attn
