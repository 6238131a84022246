// AttentionLayer: seeded init, weights, and the traced forward (see layer.hpp).
#include "attention/layer/layer.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "attention/layer/float_range.hpp"
#include "attention/layer/weights_file.hpp"
#include "attention/ops/finite_scan.hpp"
#include "attention/ops/matmul.hpp"
#include "attention/ops/max_pool.hpp"
#include "attention/ops/rmsnorm.hpp"
#include "attention/ops/rope.hpp"
#include "attention/ops/sdpa.hpp"
#include "attention/parallel.hpp"

namespace attn {

AttentionLayer::AttentionLayer(const LayerConfig& config)
    : config_(config), head_dim_(checked_head_dim(config)), kv_heads_(kv_heads_of(config)) {
  if (config.positional == PositionalKind::Alibi) alibi_slopes_ = attn::alibi_slopes(config.heads);
  set_weights(seeded_weights(weight_shape(), config.seed));
}

WeightShape AttentionLayer::weight_shape() const {
  WeightShape shape;
  shape.d_model = config_.d_model;
  shape.heads = config_.heads;
  shape.inner = inner_dim();
  shape.bias = config_.bias;
  shape.out_proj = config_.out_proj;
  shape.kv_inner = kv_inner_dim();
  shape.out_bias = has_out_bias(config_);
  const bool whole = config_.qk_norm == QkNorm::Whole;
  if (config_.qk_norm != QkNorm::None) {
    shape.q_norm = whole ? inner_dim() : head_dim_;
    shape.k_norm = whole ? kv_inner_dim() : head_dim_;
  }
  shape.qk_norm_one_plus = config_.qk_norm_weight == RmsNormWeight::OnePlus;
  return shape;
}

AttentionLayer::AttentionLayer(const LayerConfig& config, const LayerWeightsView& borrowed)
    : config_(config), head_dim_(checked_head_dim(config)), kv_heads_(kv_heads_of(config)) {
  if (config.positional == PositionalKind::Alibi) alibi_slopes_ = attn::alibi_slopes(config.heads);
  use_weights(borrowed);
  borrowed_ = borrowed;
}

void AttentionLayer::set_weights(LayerWeights weights) {
  use_weights(view_of(weights));
  weights_ = std::move(weights);  // packed above from the same values; the old ones are dropped
  borrowed_.reset();
}

void AttentionLayer::use_weights(const LayerWeightsView& weights) {
  const WeightShape shape = weight_shape();
  validate_weights(weights, shape);  // with the q/k norms' weights when it has them
  magnitudes_ = weight_magnitudes(weights, shape);
  const std::size_t inner = inner_dim();
  const std::size_t d = config_.d_model;
  // W_qᵀ and [W_k; W_v]ᵀ packed straight from the rows of in_proj_weight.
  pack_transposed(ConstMatView(weights.in_proj_weight.data(), inner, d), in_q_packed_);
  pack_transposed(ConstMatView(weights.in_proj_weight.data() + inner * d, 2 * kv_inner_dim(), d),
                  in_kv_packed_);
  if (config_.out_proj) {
    pack_transposed(ConstMatView(weights.out_proj_weight.data(), d, inner), out_packed_);
  }
}

void AttentionLayer::load_safetensors(std::span<const std::uint8_t> bytes) {
  set_weights(read_layer_weights(safetensors::File::parse(bytes), weight_shape()));
}

std::vector<std::uint8_t> AttentionLayer::save_safetensors() const {
  std::map<std::string, std::string> metadata = {{"format", "pt"},
                                                 {"heads", std::to_string(config_.heads)},
                                                 {"d_model", std::to_string(config_.d_model)}};
  if (kv_heads_ != config_.heads) metadata["kv_heads"] = std::to_string(kv_heads_);
  return safetensors::write(layer_tensors(weight_view(), weight_shape()), metadata);
}

void AttentionLayer::validate_forward(std::span<const float> x,
                                      const ForwardOptions& options) const {
  check_forward_sizes(config_.d_model, config_.heads, x.size(), options);
  // One pass over x (and kv): finiteness (a NaN or ±∞ is named by its index) and the largest |x|.
  const FiniteScan x_scan = finite_scan(x);
  if (!x_scan.finite) require_finite(x, "x");
  FiniteScan kv_scan = x_scan;
  if (options.cross) {
    kv_scan = finite_scan(options.kv);
    if (!kv_scan.finite) require_finite(options.kv, "kv");
  }
  // Finite inputs and weights can still overflow float32 inside the forward (weights of 1e30
  // from a file): refuse what could, instead of returning NaN or rows that look fully masked.
  const double encoding = is_additive(config_.positional) ? 8.0 : 0.0;  // |PE| <= 1 or 0.5·N(0,1)
  const std::size_t kv_n = options.cross ? options.kv_n : options.n;
  FloatRangeInputs range;
  range.d_model = config_.d_model;
  range.head_dim = head_dim_;
  range.inner = inner_dim();
  range.x = x_scan.max_abs + encoding;
  range.kv = kv_scan.max_abs + encoding;
  range.weights = magnitudes_;
  range.out_proj = config_.out_proj;
  range.scale = options.scale
                    ? config_.scale != 0.0 ? config_.scale : 1.0 / std::sqrt(double(head_dim_))
                    : 1.0;
  range.rope = config_.positional == PositionalKind::Rope ? 2.0 : 1.0;
  if (config_.qk_norm != QkNorm::None) {
    const LayerWeightsView w = weight_view();
    const double offset = config_.qk_norm_weight == RmsNormWeight::OnePlus ? 1.0 : 0.0;
    const auto bound = [&](std::span<const float> weight) {
      double largest = 0.0;
      for (const float value : weight) largest = std::max(largest, std::abs(offset + value));
      return std::sqrt(double(weight.size())) * largest;
    };
    range.q_norm = bound(w.q_norm);
    range.k_norm = bound(w.k_norm);
  }
  range.score_bias = alibi_slopes_.empty() ? 0.0 : double(std::max(options.n, kv_n));  // m <= 1
  check_float_range(range);
}

void AttentionLayer::record(StepKind kind, ConstMatView data, int head) {
  if (!tracing_) return;
  Step step = std::move(spare_steps_[spare_slot(kind, head)]);
  step.kind = kind;
  step.head = head;
  step.kv_head =
      head < 0 || step_info(kind).per_kv_head ? head : int(kv_head_of(std::size_t(head)));
  step.shape.assign({data.rows, data.cols});
  step.data.resize(data.rows * data.cols);
  for (std::size_t r = 0; r < data.rows; ++r) {
    std::copy(data.row(r), data.row(r) + data.cols, step.data.begin() + r * data.cols);
  }
  result_.trace.steps.push_back(std::move(step));
}

void AttentionLayer::record_heads(StepKind kind, ConstMatView all) {
  const bool kv = step_info(kind).per_kv_head;
  for (std::size_t h = 0; h < (kv ? kv_heads_ : config_.heads); ++h) {
    if (kv ? traces_kv(h) : traces(h)) {
      record(kind, all.col_block(h * head_dim_, head_dim_), int(h));
    }
  }
}

ConstMatView AttentionLayer::add_positional(std::span<const float> x, std::size_t rows,
                                            Matrix& with_pe, StepKind kind) {
  const std::size_t d = config_.d_model;
  const ConstMatView raw(x.data(), rows, d);
  if (!is_additive(config_.positional)) {
    record(kind, raw);
    return raw;
  }
  positional_.resize(rows, d);
  if (config_.positional == PositionalKind::Sinusoidal) {
    sinusoidal_encoding(positional_);
  } else {
    learned_encoding(positional_, config_.seed);
  }
  if (kind == StepKind::Input) record(StepKind::Positional, positional_);
  with_pe.resize(rows, d);
  for (std::size_t i = 0; i < rows * d; ++i) with_pe.data()[i] = x[i] + positional_.data()[i];
  record(kind, with_pe);
  return with_pe;
}

AttentionLayer::Projections AttentionLayer::project(ConstMatView input, ConstMatView source,
                                                    bool cross) {
  // Q = X W_Qᵀ + b_Q, K and V likewise from the source (kv_heads heads each).
  const std::size_t n = input.rows, kv_n = source.rows, dk = head_dim_, inner = inner_dim();
  const std::size_t kv_inner = kv_inner_dim();
  const float* in_bias = config_.bias ? weight_view().in_proj_bias.data() : nullptr;
  const float* kv_bias = in_bias ? in_bias + inner : nullptr;
  Projections p;
  if (!cross) {
    q_proj_.resize(n, inner + 2 * kv_inner);
    matmul_packed(input, in_q_packed_, q_proj_.view().col_block(0, inner), in_bias);
    matmul_packed(input, in_kv_packed_, q_proj_.view().col_block(inner, 2 * kv_inner), kv_bias);
    p.q = q_proj_.view().col_block(0, inner);
    p.k = q_proj_.view().col_block(inner, kv_inner);
    p.v = q_proj_.view().col_block(inner + kv_inner, kv_inner);
  } else {
    q_proj_.resize(n, inner);
    kv_proj_.resize(kv_n, 2 * kv_inner);
    matmul_packed(input, in_q_packed_, q_proj_, in_bias);
    matmul_packed(source, in_kv_packed_, kv_proj_, kv_bias);
    p.q = q_proj_.view();
    p.k = kv_proj_.view().col_block(0, kv_inner);
    p.v = kv_proj_.view().col_block(kv_inner, kv_inner);
  }
  record_heads(StepKind::Q, p.q);
  record_heads(StepKind::K, p.k);
  record_heads(StepKind::V, p.v);
  if (config_.qk_norm != QkNorm::None) {
    // Each row's query heads (and key heads) normalised per head, or across all of them at once
    // (the whole projection, before the head split), in place.
    const LayerWeightsView w = weight_view();
    const float eps = float(config_.qk_norm_eps);
    const bool whole = config_.qk_norm == QkNorm::Whole;
    const auto normalise = [&](MatView m, const float* weight, std::size_t heads) {
      for (std::size_t t = 0; t < m.rows; ++t) {
        rmsnorm_forward(m.row(t), weight, m.row(t), whole ? 1 : heads, whole ? m.cols : dk, eps,
                        config_.qk_norm_weight);
      }
    };
    normalise(p.q, w.q_norm.data(), config_.heads);
    normalise(p.k, w.k_norm.data(), kv_heads_);
    record_heads(StepKind::QNormed, p.q);
    record_heads(StepKind::KNormed, p.k);
  }
  if (config_.positional == PositionalKind::Rope) {
    // Row t of every query head and of every key head turns by t·θ_i (config.rope's pairing
    // and frequencies; only the first rotary dims of each head when the spec has them); keys are
    // rotated once per key/value head, not once per query head.
    const RopeSpec& spec = config_.rope;
    const std::size_t rotated = spec.rotated(dk);
    const RopeTables<float> tables(std::max(n, kv_n), rotated, 1, spec);
    const auto rotate = [&](MatView head) {
      for (std::size_t t = 0; t < head.rows; ++t) {
        rope_rotate_head(head.row(t), rotated, tables, t, spec.pairing);
      }
    };
    for (std::size_t h = 0; h < config_.heads; ++h) rotate(p.q.col_block(h * dk, dk));
    for (std::size_t g = 0; g < kv_heads_; ++g) rotate(p.k.col_block(g * dk, dk));
    record_heads(StepKind::QRotated, p.q);
    record_heads(StepKind::KRotated, p.k);
  }
  return p;
}

void AttentionLayer::attend(const Projections& p, const ForwardOptions& options, std::size_t kv_n) {
  const std::size_t n = options.n, dk = head_dim_, heads = config_.heads;
  LogitParams params;
  params.scale = score_scale(config_, dk, options.scale);
  params.softcap = float(config_.softcap);
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
  // Traced, or a preview without the weights, one head at a time (they share the weights' scratch
  // and the trace's records); otherwise each head on one thread of the pool: every head's values
  // are the same for any thread count.
  const bool one_at_a_time = tracing_ || !(flash || options.want_weights);
  if (one_at_a_time) scratch_weights_.resize(n, kv_n);
  concat_.resize(n, heads * dk);
  if (flash) {
    flash_.resize(heads);
  } else {
    sdpa_.resize(heads);
  }
  Matrix scores_copy, scaled_copy, capped_copy, masked_copy;
  SdpaSnapshots snapshots{&scores_copy, &scaled_copy, &capped_copy, &masked_copy};
  // `scratch`: the workspace of the thread's part (its first head's slot), reused by its heads.
  const auto attend_head = [&](std::size_t h, std::size_t scratch) {
    LogitParams head_params = params;
    if (!alibi_slopes_.empty()) {
      head_params.alibi = true;
      head_params.alibi_slope = alibi_slopes_[h];
    }
    // Query head h reads the keys and values of its group's head g.
    const std::size_t g = kv_head_of(h);
    const MatView context = concat_.view().col_block(h * dk, dk);
    const ConstMatView q = p.q.col_block(h * dk, dk);
    const ConstMatView k = p.k.col_block(g * dk, dk);
    const ConstMatView v = p.v.col_block(g * dk, dk);
    if (flash) {
      flash_attention(q, k, v, head_params, context, flash_[scratch]);
      return;
    }
    MatView weights = options.want_weights
                          ? MatView(result_.attention.data() + h * n * kv_n, n, kv_n)
                          : scratch_weights_.view();
    scaled_dot_product_attention(q, k, v, head_params, weights, context, sdpa_[scratch],
                                 traces(h) ? &snapshots : nullptr);
    if (traces(h)) {
      record(StepKind::Scores, scores_copy, int(h));
      record(StepKind::Scaled, scaled_copy, int(h));
      if (head_params.softcap > 0.0f) record(StepKind::Capped, capped_copy, int(h));
      if (head_params.alibi) record(StepKind::Alibi, sdpa_[scratch].bias, int(h));
      record(StepKind::Masked, masked_copy, int(h));
      record(StepKind::Weights, weights, int(h));
      record(StepKind::Context, context, int(h));
    }
    if (options.preview_side > 0) {
      max_pool(weights, preview.step,
               MatView(preview.values.data() + h * preview.rows * preview.cols, preview.rows,
                       preview.cols));
    }
  };
  if (one_at_a_time) {
    for (std::size_t h = 0; h < heads; ++h) attend_head(h, 0);
  } else {
    // A thread takes at least kParallelMultiplyAdds' worth of heads (QKᵀ and A·V: 2·n·kv_n·d_k
    // each).
    const std::size_t head_work = 2 * n * kv_n * dk + 1;
    parallel_for(heads, kParallelMultiplyAdds / head_work + 1,
                 [&](std::size_t begin, std::size_t end) {
                   for (std::size_t h = begin; h < end; ++h) attend_head(h, begin);
                 });
  }
  record(StepKind::Concat, concat_);
}

void AttentionLayer::project_output(std::size_t n) {
  const std::size_t inner = inner_dim();
  if (config_.out_proj) {
    result_.output.resize(n, config_.d_model);
    matmul_packed(concat_, out_packed_, result_.output,
                  has_out_bias(config_) ? weight_view().out_proj_bias.data() : nullptr);
  } else {
    result_.output.resize(n, inner);
    std::copy(concat_.data(), concat_.data() + n * inner, result_.output.data());
  }
  record(StepKind::Output, result_.output);
}

const ForwardResult& AttentionLayer::forward(std::span<const float> x,
                                             const ForwardOptions& options) {
  validate_forward(x, options);
  const std::size_t n = options.n;
  const std::size_t kv_n = options.cross ? options.kv_n : n;
  tracing_ = options.want_trace;
  trace_head_ = options.trace_head;
  spare_steps_.resize((static_cast<std::size_t>(StepKind::Output) + 1) * (config_.heads + 1));
  for (Step& step : result_.trace.steps) {
    spare_steps_[spare_slot(step.kind, step.head)] = std::move(step);
  }
  result_.trace.steps.clear();
  result_.options = options;
  result_.options.kv = {};

  record(StepKind::Embedding, ConstMatView(x.data(), n, config_.d_model));
  const ConstMatView input = add_positional(x, n, input_, StepKind::Input);
  const ConstMatView source =
      options.cross ? add_positional(options.kv, kv_n, source_, StepKind::Source) : input;
  const Projections p = project(input, source, options.cross);
  attend(p, options, kv_n);
  project_output(n);
  if (tracing_) {  // walkthrough order: by kind, then head (records are in head order)
    std::stable_sort(result_.trace.steps.begin(), result_.trace.steps.end(),
                     [](const Step& a, const Step& b) { return a.kind < b.kind; });
  }
  return result_;
}

}  // namespace attn
