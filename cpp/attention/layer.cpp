// AttentionLayer: validation, seeded init, weight I/O and the traced forward (see layer.hpp).
#include "attention/layer.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "attention/error.hpp"
#include "attention/float_range.hpp"
#include "attention/ops/finite_scan.hpp"
#include "attention/ops/matmul.hpp"
#include "attention/ops/max_pool.hpp"
#include "attention/ops/sdpa.hpp"
#include "attention/rng.hpp"
#include "attention/safetensors.hpp"

namespace attn {

namespace {

std::string str(std::size_t value) {
  return std::to_string(value);
}
// "[24, 8]"
std::string shape_str(const std::vector<std::size_t>& shape) {
  std::string text;
  for (auto extent : shape) text += (text.empty() ? "" : ", ") + str(extent);
  return "[" + text + "]";
}

// "4 and 8" style list of the head counts that divide d_model (for the error message).
std::string divisors_of(std::size_t d_model) {
  std::string list;
  for (std::size_t h = 1; h <= d_model && h <= 64; ++h) {
    if (d_model % h == 0) list += (list.empty() ? "" : ", ") + str(h);
  }
  return list;
}

void require_finite(std::span<const float> values, const std::string& name) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      throw Error(name + "[" + str(i) + "] is " + (std::isnan(values[i]) ? "NaN" : "infinite") +
                  ": values must be finite");
    }
  }
}

void require_size(const std::vector<float>& values, std::size_t rows, std::size_t cols,
                  const std::string& name) {
  if (values.size() != rows * cols) {
    throw Error(name + " has " + str(values.size()) + " values, expected " +
                shape_str({rows, cols}) + " = " + str(rows * cols));
  }
}

void require_empty(const std::vector<float>& values, const std::string& name,
                   const std::string& why) {
  if (!values.empty()) throw Error(name + " was given, but " + why);
}

// "h" as the 1-based subscript used in equations and titles.
std::string head_label(std::size_t h) {
  return str(h + 1);
}

std::size_t step_rank(const std::string& id) {
  const auto& order = step_order();
  return static_cast<std::size_t>(std::find(order.begin(), order.end(), id) - order.begin());
}

}  // namespace

AttentionLayer::AttentionLayer(const LayerConfig& config) : config_(config) {
  if (config.d_model == 0 || config.d_model > kMaxModelDim) {
    throw Error("dModel must be between 1 and " + str(kMaxModelDim) + ", got " +
                str(config.d_model));
  }
  if (config.heads == 0 || config.heads > kMaxHeads) {
    throw Error("heads must be between 1 and " + str(kMaxHeads) + ", got " + str(config.heads));
  }
  if (config.head_dim == 0) {
    if (config.d_model % config.heads != 0) {
      throw Error("heads must divide dModel (d_k = dModel / heads): " + str(config.d_model) +
                  " is not divisible by " + str(config.heads) +
                  "; possible head counts: " + divisors_of(config.d_model));
    }
    head_dim_ = config.d_model / config.heads;
  } else {
    if (config.head_dim > kMaxModelDim) {
      throw Error("headDim must be at most " + str(kMaxModelDim) + ", got " + str(config.head_dim));
    }
    head_dim_ = config.head_dim;
  }
  if (config.positional == PositionalKind::Rope && head_dim_ % 2 != 0) {
    throw Error("RoPE rotates pairs of dimensions, so d_k must be even; d_k = " + str(head_dim_));
  }
  if (config.positional == PositionalKind::Alibi) alibi_slopes_ = alibi_slopes(config.heads);

  const std::size_t inner = inner_dim();
  LayerWeights init;
  NumpyRandomState rng(config.seed);
  init.in_proj_weight.resize(3 * inner * config.d_model);
  const double xavier = std::sqrt(6.0 / double(config.d_model + 3 * inner));
  rng.fill_uniform(init.in_proj_weight, -xavier, xavier);
  if (config.out_proj) {
    init.out_proj_weight.resize(config.d_model * inner);
    const double bound = 1.0 / std::sqrt(double(inner));
    rng.fill_uniform(init.out_proj_weight, -bound, bound);
  }
  if (config.bias) {
    const double bound = 1.0 / std::sqrt(double(config.d_model));
    init.in_proj_bias.resize(3 * inner);
    rng.fill_uniform(init.in_proj_bias, -bound, bound);
    if (config.out_proj) {
      init.out_proj_bias.resize(config.d_model);
      rng.fill_uniform(init.out_proj_bias, -bound, bound);
    }
  }
  set_weights(std::move(init));
}

void AttentionLayer::set_weights(LayerWeights weights) {
  const std::size_t inner = inner_dim();
  const std::size_t d = config_.d_model;
  require_size(weights.in_proj_weight, 3 * inner, d, "in_proj_weight");
  require_finite(weights.in_proj_weight, "in_proj_weight");
  if (config_.out_proj) {
    require_size(weights.out_proj_weight, d, inner, "out_proj.weight");
    require_finite(weights.out_proj_weight, "out_proj.weight");
  } else {
    require_empty(weights.out_proj_weight, "out_proj.weight",
                  "the layer was created without an output projection");
  }
  if (config_.bias) {
    require_size(weights.in_proj_bias, 1, 3 * inner, "in_proj_bias");
    require_finite(weights.in_proj_bias, "in_proj_bias");
    if (config_.out_proj) {
      require_size(weights.out_proj_bias, 1, d, "out_proj.bias");
      require_finite(weights.out_proj_bias, "out_proj.bias");
    }
  } else {
    require_empty(weights.in_proj_bias, "in_proj_bias", "the layer was created with bias: false");
    require_empty(weights.out_proj_bias, "out_proj.bias", "the layer was created with bias: false");
  }
  weights_ = std::move(weights);
  for (std::size_t block = 0; block < 3; ++block) {  // Q, K, V
    const std::span<const float> w(weights_.in_proj_weight);
    weight_max_abs_[block] = finite_scan(w.subspan(block * inner * d, inner * d)).max_abs;
    const std::span<const float> b(weights_.in_proj_bias);
    weight_max_abs_[3 + block] =
        b.empty() ? 0.0f : finite_scan(b.subspan(block * inner, inner)).max_abs;
  }
  weight_max_abs_[6] = finite_scan(weights_.out_proj_weight).max_abs;
  weight_max_abs_[7] = finite_scan(weights_.out_proj_bias).max_abs;
  prepare_weights();
}

void AttentionLayer::prepare_weights() {
  const std::size_t inner = inner_dim();
  const std::size_t d = config_.d_model;
  // W_qᵀ and [W_k; W_v]ᵀ packed straight from the rows of in_proj_weight.
  pack_transposed(ConstMatView(weights_.in_proj_weight.data(), inner, d), in_q_packed_);
  pack_transposed(ConstMatView(weights_.in_proj_weight.data() + inner * d, 2 * inner, d),
                  in_kv_packed_);
  if (config_.out_proj) {
    pack_transposed(ConstMatView(weights_.out_proj_weight.data(), d, inner), out_packed_);
  }
}

void AttentionLayer::load_safetensors(std::span<const std::uint8_t> bytes) {
  const auto file = safetensors::File::parse(bytes);
  const std::size_t inner = inner_dim();
  const std::size_t d = config_.d_model;
  // name -> expected shape, in state_dict order
  std::vector<std::pair<std::string, std::vector<std::size_t>>> expected = {
      {"in_proj_weight", {3 * inner, d}}};
  if (config_.bias) expected.push_back({"in_proj_bias", {3 * inner}});
  if (config_.out_proj) expected.push_back({"out_proj.weight", {d, inner}});
  if (config_.bias && config_.out_proj) expected.push_back({"out_proj.bias", {d}});
  auto is_expected = [&](const std::string& name) {
    return std::any_of(expected.begin(), expected.end(),
                       [&](const auto& entry) { return entry.first == name; });
  };
  std::string wanted;
  for (const auto& [name, shape] : expected) wanted += (wanted.empty() ? "" : ", ") + name;
  for (const auto& tensor : file.tensors()) {
    if (!is_expected(tensor.name)) {
      throw Error("unexpected tensor '" + tensor.name +
                  "' in the weights file; this layer (bias: " + (config_.bias ? "true" : "false") +
                  ") takes exactly: " + wanted);
    }
  }
  for (const auto& [name, shape] : expected) {
    if (!file.contains(name)) {
      throw Error("the weights file has no tensor '" + name + "'; this layer takes: " + wanted);
    }
    if (file.info(name).shape != shape) {
      throw Error("tensor '" + name + "' has shape " + shape_str(file.info(name).shape) +
                  ", expected " + shape_str(shape) + " for dModel " + str(d) + " and " +
                  str(config_.heads) + " heads");
    }
  }
  LayerWeights loaded;  // every name and shape was checked above
  loaded.in_proj_weight = file.f32("in_proj_weight");
  if (config_.out_proj) loaded.out_proj_weight = file.f32("out_proj.weight");
  if (config_.bias) {
    loaded.in_proj_bias = file.f32("in_proj_bias");
    if (config_.out_proj) loaded.out_proj_bias = file.f32("out_proj.bias");
  }
  set_weights(std::move(loaded));
}

std::vector<std::uint8_t> AttentionLayer::save_safetensors() const {
  const std::size_t inner = inner_dim();
  const std::size_t d = config_.d_model;
  std::vector<safetensors::TensorToWrite> tensors;
  tensors.push_back(
      safetensors::make_f32("in_proj_weight", {3 * inner, d}, weights_.in_proj_weight));
  if (config_.bias) {
    tensors.push_back(safetensors::make_f32("in_proj_bias", {3 * inner}, weights_.in_proj_bias));
  }
  if (config_.out_proj) {
    tensors.push_back(
        safetensors::make_f32("out_proj.weight", {d, inner}, weights_.out_proj_weight));
    if (config_.bias) {
      tensors.push_back(safetensors::make_f32("out_proj.bias", {d}, weights_.out_proj_bias));
    }
  }
  return safetensors::write(tensors,
                            {{"format", "pt"}, {"heads", str(config_.heads)}, {"d_model", str(d)}});
}

void AttentionLayer::validate_forward(std::span<const float> x,
                                      const ForwardOptions& options) const {
  // Sizes are multiplied in 64 bits: size_t is 32 bits in wasm and n * kv_n can wrap.
  const std::uint64_t d = config_.d_model;
  const std::uint64_t n = options.n;
  if (n == 0) throw Error("n must be at least 1 (the number of query tokens), got 0");
  if (n > kMaxSequence) {
    throw Error("n = " + str(n) + " exceeds the limit of " + str(kMaxSequence) + " tokens");
  }
  if (x.size() != n * d) {
    throw Error("x has " + str(x.size()) + " values, expected n * dModel = " + str(n) + " * " +
                str(d) + " = " + str(n * d));
  }
  // One pass over x: finiteness (a NaN or ±∞ is named by its index) and the largest |x|.
  const FiniteScan x_scan = finite_scan(x);
  if (!x_scan.finite) require_finite(x, "x");
  FiniteScan kv_scan = x_scan;
  const std::uint64_t kv_n = options.cross ? options.kv_n : n;
  if (options.cross) {
    if (kv_n == 0) throw Error("kvN must be at least 1 for cross-attention, got 0");
    if (kv_n > kMaxSequence) {
      throw Error("kvN = " + str(kv_n) + " exceeds the limit of " + str(kMaxSequence) + " tokens");
    }
    if (options.kv.size() != kv_n * d) {
      throw Error("kv has " + str(options.kv.size()) + " values, expected kvN * dModel = " +
                  str(kv_n) + " * " + str(d) + " = " + str(kv_n * d));
    }
    kv_scan = finite_scan(options.kv);
    if (!kv_scan.finite) require_finite(options.kv, "kv");
  }
  validate_mask(options.mask, n, kv_n);
  const std::uint64_t per_head = n * kv_n;
  const bool holds_scores = options.want_weights || options.want_trace || options.preview_side > 0;
  if (holds_scores && per_head > kMaxScoreValues) {
    throw Error("n * kvN = " + str(per_head) + " attention scores per head exceed the limit of " +
                str(kMaxScoreValues));
  }
  const std::uint64_t all_heads = per_head * config_.heads;
  if (options.want_weights && all_heads > kMaxScoreValues) {
    throw Error("heads * n * kvN = " + str(all_heads) + " attention weights exceed the limit of " +
                str(kMaxScoreValues) + "; pass weights: false to compute the output only");
  }
  if (options.preview_side > kMaxSequence) {
    throw Error("preview must be a side of at most " + str(kMaxSequence) + " cells, got " +
                str(options.preview_side));
  }
  if (options.preview_side > 0) {
    // n and kv_n are within kMaxSequence here (checked above).
    const std::size_t step = pool_step(n, kv_n, options.preview_side);
    const std::uint64_t pooled =
        std::uint64_t{config_.heads} * pooled_size(n, step) * pooled_size(kv_n, step);
    if (pooled > kMaxScoreValues) {
      throw Error("a preview of heads * " + str(pooled / config_.heads) +
                  " cells = " + str(pooled) + " values exceeds the limit of " +
                  str(kMaxScoreValues) + "; use a smaller preview side");
    }
  }
  if (options.trace_head < -1 || options.trace_head >= int(config_.heads)) {
    throw Error("traceHead must be -1 (every head) or a head from 0 to " + str(config_.heads - 1) +
                ", got " + std::to_string(options.trace_head));
  }
  const std::uint64_t traced = options.trace_head >= 0 ? per_head : all_heads;
  if (options.want_trace && traced > kMaxTraceValues) {
    throw Error("a trace of " + std::string(options.trace_head >= 0 ? "" : "heads * ") +
                "n * kvN = " + str(traced) + " cells per step exceeds the limit of " +
                str(kMaxTraceValues) +
                "; use fewer tokens or heads, trace one head (traceHead), or pass trace: false");
  }
  // Finite inputs and weights can still overflow float32 inside the forward (weights of 1e30
  // from a file): refuse what could, instead of returning NaN or rows that look fully masked.
  const bool additive = config_.positional == PositionalKind::Sinusoidal ||
                        config_.positional == PositionalKind::Learned;
  const double encoding = additive ? 8.0 : 0.0;  // |sinusoidal| <= 1, |learned| = |0.5·N(0,1)|
  FloatRangeInputs range;
  range.d_model = config_.d_model;
  range.head_dim = head_dim_;
  range.inner = inner_dim();
  range.x = x_scan.max_abs + encoding;
  range.kv = kv_scan.max_abs + encoding;
  range.q_weight = weight_max_abs_[0];
  range.k_weight = weight_max_abs_[1];
  range.v_weight = weight_max_abs_[2];
  range.q_bias = weight_max_abs_[3];
  range.k_bias = weight_max_abs_[4];
  range.v_bias = weight_max_abs_[5];
  range.out_weight = config_.out_proj ? weight_max_abs_[6] : -1.0;
  range.out_bias = weight_max_abs_[7];
  range.scale = options.scale ? 1.0 / std::sqrt(double(head_dim_)) : 1.0;
  range.rope = config_.positional == PositionalKind::Rope ? 2.0 : 1.0;
  range.score_bias = alibi_slopes_.empty() ? 0.0 : double(std::max(n, kv_n));  // slopes <= 1
  check_float_range(range);
}

void AttentionLayer::record(std::string id, std::string title, std::string equation,
                            ConstMatView data, int head, std::string rows, std::string cols) {
  if (!tracing_) return;
  Step step{std::move(id), std::move(title), std::move(equation), {data.rows, data.cols},
            head,          std::move(rows),  std::move(cols),     {}};
  step.data.resize(data.rows * data.cols);
  for (std::size_t r = 0; r < data.rows; ++r) {
    std::copy(data.row(r), data.row(r) + data.cols, step.data.begin() + r * data.cols);
  }
  result_.trace.steps.push_back(std::move(step));
}

ConstMatView AttentionLayer::add_positional(std::span<const float> x, std::size_t rows,
                                            Matrix& with_pe, const char* step_id) {
  const std::size_t d = config_.d_model;
  const bool is_input = std::string(step_id) == "input";
  const ConstMatView raw(x.data(), rows, d);
  const std::string symbol = is_input ? "X" : "X_{src}";
  const std::string title = is_input ? "Input to attention" : "Source sequence (keys and values)";
  const bool additive = config_.positional == PositionalKind::Sinusoidal ||
                        config_.positional == PositionalKind::Learned;
  if (!additive) {
    record(step_id, title, symbol + "_{in} = " + symbol, raw, -1, "position", "dimension");
    return raw;
  }
  positional_.resize(rows, d);
  if (config_.positional == PositionalKind::Sinusoidal) {
    sinusoidal_encoding(positional_);
    if (is_input) {
      record("positional", "Sinusoidal positional encoding",
             R"(PE_{(pos,2i)} = \sin\left(\frac{pos}{10000^{2i/d_{model}}}\right),\quad )"
             R"(PE_{(pos,2i+1)} = \cos\left(\frac{pos}{10000^{2i/d_{model}}}\right))",
             positional_, -1, "position", "dimension");
    }
  } else {
    learned_encoding(positional_, config_.seed);
    if (is_input) {
      record("positional", "Learned positional embedding",
             R"(PE = P[0{:}n] \quad (P \text{ a learned table, one row per position}))",
             positional_, -1, "position", "dimension");
    }
  }
  with_pe.resize(rows, d);
  for (std::size_t i = 0; i < rows * d; ++i) with_pe.data()[i] = x[i] + positional_.data()[i];
  record(step_id, title, symbol + "_{in} = " + symbol + " + PE", with_pe, -1, "position",
         "dimension");
  return with_pe;
}

void AttentionLayer::record_projections(ConstMatView q_all, ConstMatView k_all, ConstMatView v_all,
                                        bool cross) {
  const std::size_t dk = head_dim_;
  const std::string src = cross ? "X_{src}" : "X";
  for (std::size_t h = 0; h < config_.heads; ++h) {
    if (!traces(h)) continue;
    const std::string s = head_label(h);
    auto projection = [&](const std::string& m, const std::string& from) {
      const std::string bias = config_.bias ? " + b_{" + m + "," + s + "}" : "";
      return m + "_{" + s + "} = " + from + "_{in} W_{" + m + "," + s + "}^\\top" + bias;
    };
    record("q", "Queries, head " + s, projection("Q", "X"), q_all.col_block(h * dk, dk), int(h),
           "query", "dimension");
    record("k", "Keys, head " + s, projection("K", src), k_all.col_block(h * dk, dk), int(h), "key",
           "dimension");
    record("v", "Values, head " + s, projection("V", src), v_all.col_block(h * dk, dk), int(h),
           "key", "dimension");
  }
}

void AttentionLayer::record_rotations(ConstMatView q_all, ConstMatView k_all) {
  const std::size_t dk = head_dim_;
  for (std::size_t h = 0; h < config_.heads; ++h) {
    if (!traces(h)) continue;
    const std::string s = head_label(h);
    record("q_rotated", "Queries rotated by position (RoPE), head " + s,
           R"(\hat{q}_{pos} = R_{\Theta, pos}\, q_{pos},\ \theta_i = 10000^{-2i/d_k})",
           q_all.col_block(h * dk, dk), int(h), "query", "dimension");
    record("k_rotated", "Keys rotated by position (RoPE), head " + s,
           R"(\hat{k}_{pos} = R_{\Theta, pos}\, k_{pos},\ \theta_i = 10000^{-2i/d_k})",
           k_all.col_block(h * dk, dk), int(h), "key", "dimension");
  }
}

void AttentionLayer::record_head(std::size_t h, const SdpaSnapshots& snapshots,
                                 ConstMatView weights, ConstMatView context, bool scaled) {
  const std::string s = head_label(h);
  auto subst = [&](std::string eq) {  // % -> this head's 1-based number
    for (auto pos = eq.find('%'); pos != std::string::npos; pos = eq.find('%'))
      eq.replace(pos, 1, s);
    return eq;
  };
  const bool rope = config_.positional == PositionalKind::Rope;
  const std::string q = rope ? "\\hat{Q}" : "Q";
  const std::string k = rope ? "\\hat{K}" : "K";
  const std::string scale_eq =
      scaled ? "\\frac{S_{%}}{\\sqrt{d_k}} = \\frac{S_{%}}{\\sqrt{" + str(head_dim_) + "}}"
             : "S_{%} \\quad (\\text{scaling off})";
  const std::string bias_term = alibi_slopes_.empty() ? "" : " + B_{%}";
  record("scores", "Scores QKᵀ, head " + s,
         subst("S_{%} = " + q + "_{%} " + k + "_{%}^\\top,\\quad S_{ij} = q_i \\cdot k_j"),
         *snapshots.scores, int(h), "query", "key");
  record("scaled", "Scaled scores, head " + s, subst("\\tilde{S}_{%} = " + scale_eq),
         *snapshots.scaled, int(h), "query", "key");
  if (!alibi_slopes_.empty()) {
    record("alibi", "ALiBi distance bias, head " + s,
           subst("B_{%,ij} = -m_{%} |i - j|,\\quad m_{%} = " + std::to_string(alibi_slopes_[h])),
           sdpa_.bias, int(h), "query", "key");
  }
  record("masked", "Masked scores, head " + s,
         subst("\\tilde{S}_{%}" + bias_term +
               " + M,\\quad M_{ij} = \\begin{cases} 0 & \\text{visible} \\\\ -\\infty & "
               "\\text{masked} \\end{cases}"),
         *snapshots.masked, int(h), "query", "key");
  record("weights", "Attention weights, head " + s,
         subst("A_{%} = \\operatorname{softmax}_{\\text{row}}\\left(\\tilde{S}_{%}" + bias_term +
               " + M\\right),\\quad A_{ij} = \\frac{e^{x_{ij} - \\max_k x_{ik}}}{\\sum_k "
               "e^{x_{ik} - \\max_k x_{ik}}}"),
         weights, int(h), "query", "key");
  record("context", "Weighted sum of values, head " + s,
         subst("Z_{%} = A_{%} V_{%},\\quad z_i = \\sum_j A_{ij} v_j"), context, int(h), "query",
         "dimension");
}

const ForwardResult& AttentionLayer::forward(std::span<const float> x,
                                             const ForwardOptions& options) {
  validate_forward(x, options);
  const bool cross = options.cross;
  const std::size_t n = options.n;
  const std::size_t kv_n = cross ? options.kv_n : n;
  const std::size_t d = config_.d_model;
  const std::size_t dk = head_dim_;
  const std::size_t inner = inner_dim();
  const std::size_t heads = config_.heads;
  tracing_ = options.want_trace;
  trace_head_ = options.trace_head;
  result_.trace.steps.clear();

  record("embedding", "Token embeddings", R"(X \in \mathbb{R}^{n \times d_{model}})",
         ConstMatView(x.data(), n, d), -1, "position", "dimension");
  const ConstMatView input = add_positional(x, n, input_, "input");
  const ConstMatView source = cross ? add_positional(options.kv, kv_n, source_, "source") : input;

  // Projections: Q = X W_Qᵀ + b_Q, K and V likewise from the source.
  const float* in_bias = config_.bias ? weights_.in_proj_bias.data() : nullptr;
  const float* kv_bias = in_bias ? in_bias + inner : nullptr;
  MatView q_all, k_all, v_all;
  if (!cross) {
    q_proj_.resize(n, 3 * inner);
    matmul_packed(input, in_q_packed_, q_proj_.view().col_block(0, inner), in_bias);
    matmul_packed(input, in_kv_packed_, q_proj_.view().col_block(inner, 2 * inner), kv_bias);
    q_all = q_proj_.view().col_block(0, inner);
    k_all = q_proj_.view().col_block(inner, inner);
    v_all = q_proj_.view().col_block(2 * inner, inner);
  } else {
    q_proj_.resize(n, inner);
    kv_proj_.resize(kv_n, 2 * inner);
    matmul_packed(input, in_q_packed_, q_proj_, in_bias);
    matmul_packed(source, in_kv_packed_, kv_proj_, kv_bias);
    q_all = q_proj_.view();
    k_all = kv_proj_.view().col_block(0, inner);
    v_all = kv_proj_.view().col_block(inner, inner);
  }
  if (tracing_) record_projections(q_all, k_all, v_all, cross);
  if (config_.positional == PositionalKind::Rope) {
    for (std::size_t h = 0; h < heads; ++h) {
      apply_rope(q_all.col_block(h * dk, dk));
      apply_rope(k_all.col_block(h * dk, dk));
    }
    if (tracing_) record_rotations(q_all, k_all);
  }

  LogitParams params;
  params.scale = options.scale ? float(1.0 / std::sqrt(double(dk))) : 1.0f;
  params.mask = masks_anything(options.mask) ? &options.mask : nullptr;

  // Output only: flash attention, O(n·d) memory. Otherwise the weights are materialised (into
  // the result, or into scratch for a trace or a preview without them).
  WeightsPreview& preview = result_.preview;
  preview.step = preview.rows = preview.cols = 0;
  preview.values.clear();
  if (options.preview_side > 0) {
    preview.step = pool_step(n, kv_n, options.preview_side);
    preview.rows = pooled_size(n, preview.step);
    preview.cols = pooled_size(kv_n, preview.step);
    preview.values.resize(heads * preview.rows * preview.cols);
  }
  const bool flash = !options.want_weights && !tracing_ && options.preview_side == 0;
  result_.attention.resize(options.want_weights ? heads * n * kv_n : 0);
  if (!flash && !options.want_weights) scratch_weights_.resize(n, kv_n);
  concat_.resize(n, inner);
  Matrix scores_copy, scaled_copy, masked_copy;
  SdpaSnapshots snapshots{&scores_copy, &scaled_copy, &masked_copy};
  for (std::size_t h = 0; h < heads; ++h) {
    if (!alibi_slopes_.empty()) {
      params.alibi = true;
      params.alibi_slope = alibi_slopes_[h];
    }
    const MatView context = concat_.view().col_block(h * dk, dk);
    const ConstMatView q = q_all.col_block(h * dk, dk);
    const ConstMatView k = k_all.col_block(h * dk, dk);
    const ConstMatView v = v_all.col_block(h * dk, dk);
    if (flash) {
      flash_attention(q, k, v, params, context, flash_);
      continue;
    }
    MatView weights = options.want_weights
                          ? MatView(result_.attention.data() + h * n * kv_n, n, kv_n)
                          : scratch_weights_.view();
    scaled_dot_product_attention(q, k, v, params, weights, context, sdpa_,
                                 traces(h) ? &snapshots : nullptr);
    if (traces(h)) record_head(h, snapshots, weights, context, options.scale);
    if (options.preview_side > 0) {
      max_pool(weights, preview.step,
               MatView(preview.values.data() + h * preview.rows * preview.cols, preview.rows,
                       preview.cols));
    }
  }

  record("concat", "Heads concatenated",
         R"(Z = \operatorname{Concat}(Z_1, \ldots, Z_h) \in \mathbb{R}^{n \times h d_k})", concat_,
         -1, "query", "dimension");
  if (config_.out_proj) {
    result_.output.resize(n, d);
    matmul_packed(concat_, out_packed_, result_.output,
                  config_.bias ? weights_.out_proj_bias.data() : nullptr);
    record("output", "Output projection",
           config_.bias ? R"(Y = Z W_O^\top + b_O)" : R"(Y = Z W_O^\top)", result_.output, -1,
           "query", "dimension");
  } else {
    result_.output.resize(n, inner);
    std::copy(concat_.data(), concat_.data() + n * inner, result_.output.data());
    record("output", "Output (no output projection)", R"(Y = Z)", result_.output, -1, "query",
           "dimension");
  }
  if (tracing_) {
    std::stable_sort(
        result_.trace.steps.begin(), result_.trace.steps.end(),
        [](const Step& a, const Step& b) { return step_rank(a.id) < step_rank(b.id); });
  }
  return result_;
}

}  // namespace attn
