// The small transformer: config checks, parameter layout and init, forward, backward and
// checkpoints, see model.hpp.
#include "attention/model/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "attention/error.hpp"
#include "attention/io/safetensors.hpp"
#include "attention/layer/layer.hpp"
#include "attention/ops/cross_entropy.hpp"
#include "attention/ops/embedding.hpp"
#include "attention/ops/layernorm.hpp"
#include "attention/ops/rmsnorm.hpp"
#include "attention/ops/rope.hpp"
#include "attention/ops/swiglu.hpp"
#include "attention/ops/vec.hpp"
#include "attention/rng.hpp"

namespace attn {

namespace {

void check_range(const char* field, std::size_t value, std::size_t low, std::size_t high) {
  if (value < low || value > high) {
    throw Error(std::string(field) + " must be between " + std::to_string(low) + " and " +
                std::to_string(high) + ", got " + std::to_string(value));
  }
}

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return text + "]";
}

void resize(AlignedVector<float>& buffer, std::size_t size) {
  buffer.resize(size);
}
void zero(AlignedVector<float>& buffer, std::size_t size) {
  buffer.assign(size, 0.0f);
}

std::string number_text(double value) {  // as JavaScript writes it: 1.5, NaN
  if (std::isnan(value)) return "NaN";
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

void validate(const ModelConfig& c) {
  const bool rope = c.positional == PositionalKind::Rope;
  const std::size_t max_context = !c.checkpoint ? kMaxModelContext
                                  : rope        ? kMaxCheckpointRopeContext
                                                : kMaxCheckpointContext;
  check_range("vocab", c.vocab, 2, c.checkpoint ? kMaxCheckpointVocab : kMaxModelVocab);
  check_range("context", c.context, 1, max_context);
  check_range("d_model", c.d_model, 1, c.checkpoint ? kMaxCheckpointDModel : kMaxModelDModel);
  check_range("heads", c.heads, 1, c.d_model);
  check_range("layers", c.layers, 1, c.checkpoint ? kMaxCheckpointLayers : kMaxModelLayers);
  if (c.head_dim == 0 && c.d_model % c.heads != 0) {
    throw Error("d_model must be a multiple of heads: d_model " + std::to_string(c.d_model) +
                " is not divisible by heads " + std::to_string(c.heads));
  }
  if (c.head_dim != 0) check_range("head_dim", c.head_dim, 1, c.d_model);
  if (c.kv_heads != 0) {
    check_range("kv_heads", c.kv_heads, 1, c.heads);
    if (c.heads % c.kv_heads != 0) {
      throw Error(
          "heads must be a multiple of kv_heads (each key/value head serves a group of "
          "query heads): heads " +
          std::to_string(c.heads) + ", kv_heads " + std::to_string(c.kv_heads));
    }
  }
  if (c.mlp_width != 0) check_range("mlp_width", c.mlp_width, 1, 8 * c.d_model);
  if (!(c.norm_eps > 0.0 && c.norm_eps < 1.0)) {
    throw Error("norm_eps must be between 0 and 1 (exclusive), got " + std::to_string(c.norm_eps));
  }
  if (c.positional == PositionalKind::Alibi) {
    throw Error(
        "positional must be 'none', 'sinusoidal', 'learned' or 'rope' for a model, got "
        "'alibi'");
  }
  const std::size_t head_dim = c.head_dim ? c.head_dim : c.d_model / c.heads;
  if (rope && head_dim % 2 != 0) {
    throw Error(
        "positional 'rope' rotates pairs of dimensions: it needs an even d_k = d_model / "
        "heads, got " +
        std::to_string(head_dim));
  }
  if (rope && !c.rope.frequencies.empty() && c.rope.frequencies.size() != head_dim / 2) {
    throw Error("rope has " + std::to_string(c.rope.frequencies.size()) +
                " frequencies, expected head_dim / 2 = " + std::to_string(head_dim / 2));
  }
  if (rope && !(c.rope.base > 1.0 && std::isfinite(c.rope.base))) {
    throw Error("rope's base (rope_theta) must be a finite number above 1, got " +
                std::to_string(c.rope.base));
  }
}

AttentionShape attention_shape(const ModelConfig& c) {
  const std::size_t head_dim = c.head_dim ? c.head_dim : c.d_model / c.heads;
  return {c.heads, c.kv_heads ? c.kv_heads : c.heads, head_dim, c.window};
}
std::size_t mlp_width(const ModelConfig& c) {
  return c.mlp_width ? c.mlp_width : 4 * c.d_model;
}
bool has_qkv_bias(const ModelConfig& c) {
  return c.qkv_bias.value_or(c.bias);
}
bool has_out_bias(const ModelConfig& c) {
  return c.out_bias.value_or(c.bias);
}
bool has_mlp_bias(const ModelConfig& c) {
  return c.mlp_bias.value_or(c.bias);
}

std::vector<ParameterInfo> parameter_layout(const ModelConfig& config) {
  validate(config);
  const AttentionShape shape = attention_shape(config);
  const std::size_t d = config.d_model, v = config.vocab, W = mlp_width(config);
  const std::size_t fc_rows = config.mlp_kind == MlpKind::SwiGlu ? 2 * W : W;
  std::vector<ParameterInfo> table;
  const auto add = [&](const std::string& name, std::vector<std::size_t> dims) {
    ParameterInfo info;
    info.name = name;
    info.size = 1;
    for (std::size_t s : dims) info.size *= s;
    info.shape = std::move(dims);
    info.offset = table.empty() ? 0 : table.back().offset + table.back().size;
    table.push_back(std::move(info));
  };
  const auto add_norm = [&](const std::string& name) {
    add(name + ".weight", {d});
    if (config.norm == NormKind::LayerNorm) add(name + ".bias", {d});
  };
  add("embed.weight", {v, d});
  if (config.positional == PositionalKind::Learned) add("pos.weight", {config.context, d});
  for (std::size_t i = 0; i < config.layers; ++i) {
    const std::string prefix = "layers." + std::to_string(i) + ".";
    if (config.layer_norm) add_norm(prefix + "ln1");
    add(prefix + "attn.in_proj_weight", {shape.row(), d});
    if (has_qkv_bias(config)) add(prefix + "attn.in_proj_bias", {shape.row()});
    add(prefix + "attn.out_proj.weight", {d, shape.q_width()});
    if (has_out_bias(config)) add(prefix + "attn.out_proj.bias", {d});
    if (config.mlp) {
      if (config.layer_norm) add_norm(prefix + "ln2");
      add(prefix + "mlp.fc.weight", {fc_rows, d});
      if (has_mlp_bias(config)) add(prefix + "mlp.fc.bias", {fc_rows});
      add(prefix + "mlp.proj.weight", {d, W});
      if (has_mlp_bias(config)) add(prefix + "mlp.proj.bias", {d});
    }
  }
  if (config.layer_norm) add_norm("ln_f");
  if (!config.tied) add("unembed.weight", {v, d});
  return table;
}

std::uint64_t parameter_count(const ModelConfig& config) {
  const auto table = parameter_layout(config);
  return table.empty() ? 0 : std::uint64_t{table.back().offset} + table.back().size;
}

Model::Model(const ModelConfig& config) : config_(config) {
  lay_out({});
  if (!config_.checkpoint) grads_.assign(params_.size(), 0.0f);
  if (!config_.checkpoint) initialise();
}

Model::Model(const ModelConfig& config,
             const std::vector<std::pair<std::string, HalfKind>>& kept_half)
    : config_(config) {
  if (!config_.checkpoint) throw Error("only a checkpoint's model keeps weights 2-byte");
  lay_out(kept_half);
}

void Model::lay_out(const std::vector<std::pair<std::string, HalfKind>>& kept_half) {
  table_ = parameter_layout(config_);
  shape_ = attention_shape(config_);
  mlp_width_ = mlp_width(config_);
  std::size_t floats = 0;
  halves_.clear();
  for (auto& info : table_) {
    for (const auto& [name, kind] : kept_half) {
      if (name == info.name) {
        if (info.shape.size() != 2) throw Error("only a weight matrix is kept 2-byte, not " + name);
        info.half = kind;
      }
    }
    if (info.half) {  // its own buffer: wasm32 grows its heap by less than 2 GB at a time
      info.offset = halves_.size();
      halves_.emplace_back(info.size, std::uint16_t{0});
    } else {
      info.offset = floats;
      floats += info.size;
    }
  }
  params_.assign(floats, 0.0f);
  const auto offset = [&](const std::string& name) {
    for (const auto& info : table_) {
      if (info.name == name) return info.half ? kNone : info.offset;
    }
    return kNone;
  };
  embed_ = offset("embed.weight");
  pos_ = offset("pos.weight");
  lnf_w_ = offset("ln_f.weight");
  lnf_b_ = offset("ln_f.bias");
  unembed_ = config_.tied ? embed_ : offset("unembed.weight");
  embed_weights_ = stored("embed.weight");
  unembed_weights_ = config_.tied ? embed_weights_ : stored("unembed.weight");
  for (std::size_t i = 0; i < config_.layers; ++i) {
    const std::string prefix = "layers." + std::to_string(i) + ".";
    layers_.push_back({offset(prefix + "ln1.weight"), offset(prefix + "ln1.bias"),
                       offset(prefix + "attn.in_proj_weight"), offset(prefix + "attn.in_proj_bias"),
                       offset(prefix + "attn.out_proj.weight"),
                       offset(prefix + "attn.out_proj.bias"), offset(prefix + "ln2.weight"),
                       offset(prefix + "ln2.bias"), offset(prefix + "mlp.fc.weight"),
                       offset(prefix + "mlp.fc.bias"), offset(prefix + "mlp.proj.weight"),
                       offset(prefix + "mlp.proj.bias"), stored(prefix + "attn.in_proj_weight"),
                       stored(prefix + "attn.out_proj.weight"), stored(prefix + "mlp.fc.weight"),
                       stored(prefix + "mlp.proj.weight")});
  }
}

StoredWeights Model::stored(const std::string& name) const {
  for (const auto& info : table_) {
    if (info.name != name) continue;
    if (info.half) return StoredWeights(halves_[info.offset].data(), *info.half);
    return StoredWeights(params_.data() + info.offset);
  }
  return {};
}

void Model::initialise() {
  NumpyRandomState rng(config_.seed);
  const double residual_std = 0.02 / std::sqrt(2.0 * double(config_.layers));
  for (const auto& info : table_) {
    std::span<float> values(params_.data() + info.offset, info.size);
    const std::string& name = info.name;
    const bool layer_norm = name.starts_with("ln_f.") || name.find(".ln1.") != std::string::npos ||
                            name.find(".ln2.") != std::string::npos;
    if (layer_norm) {
      std::fill(values.begin(), values.end(), name.ends_with(".weight") ? 1.0f : 0.0f);
    } else if (name.ends_with("bias")) {  // in_proj_bias and the .bias of every linear
      std::fill(values.begin(), values.end(), 0.0f);
    } else {
      const bool residual = name.ends_with("out_proj.weight") || name.ends_with("mlp.proj.weight");
      rng.fill_randn(values, residual ? residual_std : 0.02);
    }
  }
}

const ParameterInfo& Model::parameter_info(const std::string& name) const {
  for (const auto& info : table_) {
    if (info.name == name) return info;
  }
  throw Error("this model has no parameter '" + name + "'");
}

std::span<float> Model::parameter(const std::string& name) {
  const auto& info = parameter_info(name);
  packed_current_ = false;
  if (info.half) {
    throw Error("parameter '" + name + "' is kept in " +
                (*info.half == HalfKind::BF16 ? "BF16" : "F16") +
                ", the checkpoint's own form: it has no float32 copy to change");
  }
  return {params_.data() + info.offset, info.size};
}

std::vector<float> Model::parameter_values(const std::string& name) const {
  const auto& info = parameter_info(name);
  std::vector<float> values(info.size);
  if (info.half) {
    widen(halves_[info.offset].data(), values.data(), info.size, *info.half);
  } else {
    std::copy_n(params_.data() + info.offset, info.size, values.data());
  }
  return values;
}

std::span<std::uint16_t> Model::half_parameter(const std::string& name) {
  const auto& info = parameter_info(name);
  packed_current_ = false;
  if (!info.half) throw Error("parameter '" + name + "' is float, not kept 2-byte");
  return halves_[info.offset];
}

std::uint64_t Model::parameter_bytes() const {
  std::uint64_t bytes = std::uint64_t{params_.size()} * 4;
  for (const auto& half : halves_) bytes += std::uint64_t{half.size()} * 2;
  return bytes;
}

std::span<const float> Model::gradient(const std::string& name) const {
  const auto& info = parameter_info(name);
  if (grads_.empty()) return {};  // a checkpoint model before its first backward
  return {grads_.data() + info.offset, info.size};
}

void Model::check_ids(std::span<const std::int32_t> ids, std::size_t batch, std::size_t n) const {
  if (batch == 0) throw Error("batch must be at least 1, got 0");
  if (n == 0 || n > config_.context) {
    throw Error("n must be between 1 and the context " + std::to_string(config_.context) +
                ", got " + std::to_string(n));
  }
  if (batch > kMaxModelAttentionValues / (config_.heads * n * n)) {
    throw Error("batch " + std::to_string(batch) + " × heads " + std::to_string(config_.heads) +
                " × n² " + std::to_string(n * n) + " attention weights per layer exceed the " +
                "limit of " + std::to_string(kMaxModelAttentionValues) + ": lower batch or n");
  }
  if (ids.size() != batch * n) {
    throw Error("ids has " + std::to_string(ids.size()) +
                " values, expected batch * n = " + std::to_string(batch) + " * " +
                std::to_string(n) + " = " + std::to_string(batch * n));
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || std::size_t(ids[i]) >= config_.vocab) {
      throw Error("token id " + std::to_string(ids[i]) + " at index " + std::to_string(i) +
                  " is out of range: the vocabulary has ids 0 to " +
                  std::to_string(config_.vocab - 1));
    }
  }
}

ModelOutput Model::forward(std::span<const std::int32_t> ids, std::size_t batch, std::size_t n,
                           std::optional<HeadAblation> ablation, bool all_logits) {
  check_ids(ids, batch, n);
  if (ablation) check_ablation(*ablation);
  run_forward(ids.data(), batch, n, ablation, all_logits);
  ModelOutput out;
  out.logits =
      std::span<const float>(logits_.data(), (all_logits ? batch * n : batch) * config_.vocab);
  for (const auto& layer : acts_) {
    out.attention.emplace_back(layer.att.data(), batch * config_.heads * n * n);
  }
  return out;
}

void Model::check_ablation(const HeadAblation& head) const {
  if (head.layer >= config_.layers || head.head >= config_.heads) {
    throw Error("cannot ablate layer " + std::to_string(head.layer) + " head " +
                std::to_string(head.head) + ": the model has layers 0 to " +
                std::to_string(config_.layers - 1) + " and heads 0 to " +
                std::to_string(config_.heads - 1));
  }
  if (!(head.scale >= 0.0f && head.scale <= 1.0f)) {  // NaN fails both
    throw Error("the scale of layer " + std::to_string(head.layer) + " head " +
                std::to_string(head.head) + " must be between 0 (ablated) and 1 (kept), got " +
                number_text(head.scale));
  }
}

void Model::ablate(std::vector<HeadAblation> heads) {
  for (std::size_t i = 0; i < heads.size(); ++i) {
    check_ablation(heads[i]);
    for (std::size_t j = 0; j < i; ++j) {
      if (heads[j].layer == heads[i].layer && heads[j].head == heads[i].head) {
        throw Error("layer " + std::to_string(heads[i].layer) + " head " +
                    std::to_string(heads[i].head) + " is listed twice in the ablation");
      }
    }
  }
  std::vector<std::vector<float>> scales;
  if (!heads.empty()) {
    scales.assign(config_.layers, std::vector<float>(config_.heads, 1.0f));
    for (const HeadAblation& head : heads) scales[head.layer][head.head] = head.scale;
  }
  ablated_ = std::move(heads);
  head_scales_ = std::move(scales);
}

void Model::ablate_heads(std::size_t layer, float* ctx, std::size_t rows,
                         const std::vector<std::vector<float>>& scales,
                         std::optional<HeadAblation> extra) const {
  const std::size_t d_k = shape_.head_dim, width = shape_.q_width();
  const auto apply = [&](std::size_t head, float scale) {
    if (scale == 1.0f) return;
    for (std::size_t r = 0; r < rows; ++r) {  // ctx [rows, heads·d_k]: head h owns columns h·d_k …
      float* values = ctx + r * width + head * d_k;
      if (scale == 0.0f) {
        std::fill(values, values + d_k, 0.0f);
      } else {
        for (std::size_t c = 0; c < d_k; ++c) values[c] *= scale;
      }
    }
  };
  if (!scales.empty()) {
    for (std::size_t h = 0; h < shape_.heads; ++h) apply(h, scales[layer][h]);
  }
  // The one-off head (head_ablation's): on top of the standing ones.
  if (extra && extra->layer == layer) apply(extra->head, extra->scale);
}

void Model::norm_forward(const float* x, std::size_t weight, std::size_t bias, float* out,
                         AlignedVector<float>& mean, AlignedVector<float>& rstd, std::size_t rows) {
  const std::size_t d = config_.d_model;
  if (config_.norm == NormKind::RmsNorm) {
    rmsnorm_forward(x, p(weight), out, rows, d, float(config_.norm_eps));
    return;
  }
  resize(mean, rows);
  resize(rstd, rows);
  layernorm_forward(x, p(weight), p(bias), out, mean.data(), rstd.data(), rows, d);
}

void Model::run_forward(const std::int32_t* ids, std::size_t batch, std::size_t n,
                        std::optional<HeadAblation> ablation, bool all_logits) {
  const std::size_t d = config_.d_model, M = batch * n, V = config_.vocab;
  const std::size_t row = shape_.row(), width = shape_.q_width(), W = mlp_width_;
  const bool ln = config_.layer_norm, swiglu = config_.mlp_kind == MlpKind::SwiGlu;
  const std::size_t fc_width = swiglu ? 2 * W : W;
  pack_weights();
  batch_ = batch;
  n_ = n;
  residual_.resize(config_.layers + 1);
  acts_.resize(config_.layers);
  for (auto& r : residual_) resize(r, M * d);

  const float* pos = nullptr;
  if (config_.positional == PositionalKind::Learned) {
    pos = p(pos_);
  } else if (config_.positional == PositionalKind::Sinusoidal) {
    resize(sinusoidal_, n * d);
    sinusoidal_encoding(MatView(sinusoidal_.data(), n, d));
    pos = sinusoidal_.data();
  }
  input_embedding_forward(ids, embed_weights_, pos, residual_[0].data(), batch, n, d);

  for (std::size_t l = 0; l < config_.layers; ++l) {
    const Layer& w = layers_[l];
    LayerActivations& a = acts_[l];
    const float* x = residual_[l].data();
    const float* h = x;
    if (ln) {
      resize(a.ln1, M * d);
      norm_forward(x, w.ln1_w, w.ln1_b, a.ln1.data(), a.ln1_mean, a.ln1_rstd, M);
      h = a.ln1.data();
    }
    resize(a.qkv, M * row);
    resize(a.att, batch * shape_.heads * n * n);
    resize(a.ctx, M * width);
    resize(a.mid, M * d);
    linear(l, kIn, w.in, h, p(w.in_b), a.qkv.data(), M, d, row, linear_scratch_);
    if (config_.positional == PositionalKind::Rope) {
      rope_forward(a.qkv.data(), batch, n, shape_, config_.rope);
    }
    causal_attention_forward(a.qkv.data(), a.att.data(), a.ctx.data(), batch, n, shape_,
                             attention_scratch_);
    ablate_heads(l, a.ctx.data(), M, head_scales_, ablation);
    linear(l, kOut, w.out, a.ctx.data(), p(w.out_b), a.mid.data(), M, width, d, linear_scratch_);
    vec::add(x, a.mid.data(), M * d);
    float* next = residual_[l + 1].data();
    if (!config_.mlp) {
      std::copy(a.mid.begin(), a.mid.end(), next);
      continue;
    }
    const float* h2 = a.mid.data();
    if (ln) {
      resize(a.ln2, M * d);
      norm_forward(a.mid.data(), w.ln2_w, w.ln2_b, a.ln2.data(), a.ln2_mean, a.ln2_rstd, M);
      h2 = a.ln2.data();
    }
    resize(a.fc, M * fc_width);
    resize(a.gelu, M * W);
    linear(l, kFc, w.fc, h2, p(w.fc_b), a.fc.data(), M, d, fc_width, linear_scratch_);
    if (swiglu) {
      swiglu_forward(a.fc.data(), a.gelu.data(), M, W);
    } else {
      gelu_forward(a.fc.data(), a.gelu.data(), M * W, config_.gelu);
    }
    linear(l, kProj, w.proj, a.gelu.data(), p(w.proj_b), next, M, W, d, linear_scratch_);
    vec::add(a.mid.data(), next, M * d);
  }

  // The final norm and the logits: of every row, or of each sequence's last one only.
  const std::size_t rows = all_logits ? M : batch;
  const float* last = residual_[config_.layers].data();
  if (!all_logits) {
    resize(last_rows_, batch * d);
    for (std::size_t b = 0; b < batch; ++b) {
      std::copy_n(last + ((b + 1) * n - 1) * d, d, last_rows_.data() + b * d);
    }
    last = last_rows_.data();
  }
  if (ln) {
    resize(lnf_, rows * d);
    norm_forward(last, lnf_w_, lnf_b_, lnf_.data(), lnf_mean_, lnf_rstd_, rows);
    last = lnf_.data();
  }
  resize(logits_, rows * V);
  linear(config_.layers, kIn, unembed_weights_, last, nullptr, logits_.data(), rows, d, V,
         linear_scratch_);
}

void Model::pack_weights() {
  if (packed_current_) return;
  const std::size_t d = config_.d_model, L = config_.layers;
  const std::size_t fc_width = config_.mlp_kind == MlpKind::SwiGlu ? 2 * mlp_width_ : mlp_width_;
  packed_.resize(L * kProjections + 1);
  const std::uint64_t budget =
      std::min(kPackedWeightBytes, kPackedWeightsWithParameters -
                                       std::min(kPackedWeightsWithParameters, parameter_bytes()));
  std::uint64_t used = 0;
  const auto pack = [&](std::size_t slot, const StoredWeights& w, std::size_t in, std::size_t out) {
    const std::uint64_t bytes = PackedLinear::bytes_for(w, in, out);
    if (w.empty() || used + bytes > budget) {
      packed_[slot].clear();
      return;
    }
    used += bytes;
    packed_[slot].pack(w, in, out);
  };
  for (std::size_t l = 0; l < L; ++l) {
    const Layer& w = layers_[l];
    pack(l * kProjections + kIn, w.in, d, shape_.row());
    pack(l * kProjections + kOut, w.out, shape_.q_width(), d);
    pack(l * kProjections + kFc, config_.mlp ? w.fc : StoredWeights{}, d, fc_width);
    pack(l * kProjections + kProj, config_.mlp ? w.proj : StoredWeights{}, mlp_width_, d);
  }
  pack(L * kProjections, unembed_weights_, d, config_.vocab);
  packed_current_ = true;
}

void Model::linear(std::size_t layer, Projection projection, const StoredWeights& w, const float* x,
                   const float* b, float* y, std::size_t m, std::size_t in, std::size_t out,
                   LinearScratch& scratch, std::size_t pack_values) const {
  const std::size_t slot = layer * kProjections + (layer == config_.layers ? 0 : projection);
  if (packed_current_ && slot < packed_.size() && !packed_[slot].empty()) {
    packed_[slot].forward(x, b, y, m);
  } else {
    linear_forward(x, w, b, y, m, in, out, scratch, pack_values);
  }
}

std::span<const float> Model::attention_input(std::size_t layer) const {
  if (layer >= config_.layers) {
    throw Error("layer " + std::to_string(layer) + " is out of range: the model has " +
                std::to_string(config_.layers) + " layers (0-based)");
  }
  if (batch_ * n_ == 0) throw Error("no forward yet: run the model first");
  const auto& input = config_.layer_norm ? acts_[layer].ln1 : residual_[layer];
  return {input.data(), batch_ * n_ * config_.d_model};
}

void Model::trace(std::span<const std::int32_t> ids, std::size_t n, int trace_head) {
  check_ids(ids, 1, n);
  run_forward(ids.data(), 1, n);
  const std::size_t d = config_.d_model;
  const auto block = [&](std::size_t offset, std::size_t size) {
    return offset == kNone ? std::span<const float>{}
                           : std::span<const float>(&params_[offset], size);
  };
  traced_layers_.clear();
  traced_weights_.clear();
  for (std::size_t l = 0; l < config_.layers; ++l) {
    LayerConfig layer_config;
    layer_config.d_model = d;
    layer_config.heads = shape_.heads;
    layer_config.kv_heads = shape_.kv_heads;
    layer_config.head_dim = shape_.head_dim;
    layer_config.bias = has_qkv_bias(config_);
    layer_config.out_bias = has_out_bias(config_);
    layer_config.positional =
        config_.positional == PositionalKind::Rope ? PositionalKind::Rope : PositionalKind::None;
    if (layer_config.positional == PositionalKind::Rope) layer_config.rope = config_.rope;
    // The block's attention weights as they are in the buffer: the layer borrows them.
    const std::size_t row = shape_.row(), width = shape_.q_width();
    const LayerWeightsView weights{
        traced_weights(layers_[l].in_w, layers_[l].in, row * d), block(layers_[l].in_b, row),
        traced_weights(layers_[l].out_w, layers_[l].out, d * width), block(layers_[l].out_b, d)};
    auto layer = std::make_unique<AttentionLayer>(layer_config, weights);
    ForwardOptions options;
    options.n = n;
    options.mask.kind = shape_.window != 0 ? MaskKind::SlidingWindow : MaskKind::Causal;
    if (shape_.window != 0) options.mask.window = shape_.window;
    options.want_trace = true;
    options.trace_head = trace_head;
    const auto& input = config_.layer_norm ? acts_[l].ln1 : residual_[l];
    layer->forward(std::span<const float>(input.data(), n * d), options);
    traced_layers_.push_back(std::move(layer));
  }
}

std::span<const float> Model::traced_weights(std::size_t offset, const StoredWeights& stored,
                                             std::size_t size) {
  if (offset != kNone) return {&params_[offset], size};
  traced_weights_.emplace_back(size);
  stored.rows(0, 1, size, traced_weights_.back().data());
  return traced_weights_.back();
}

float Model::loss_and_gradients(std::span<const std::int32_t> ids,
                                std::span<const std::int32_t> targets, std::size_t batch,
                                std::size_t n) {
  check_ids(ids, batch, n);
  if (config_.norm != NormKind::LayerNorm || config_.mlp_kind != MlpKind::Gelu) {
    throw Error(
        "this model cannot be trained: RMSNorm and SwiGLU (the Llama family's) have a "
        "forward here but no backward");
  }
  if (has_half_parameters()) {
    throw Error(
        "this model cannot be trained: its weights are kept in the checkpoint's 2-byte "
        "form (F16 or BF16); load an F32 checkpoint to train it");
  }
  if (targets.size() != ids.size()) {
    throw Error("targets has " + std::to_string(targets.size()) +
                " values, expected batch * n = " + std::to_string(ids.size()));
  }
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (targets[i] >= 0 && std::size_t(targets[i]) >= config_.vocab) {
      throw Error("target " + std::to_string(targets[i]) + " at index " + std::to_string(i) +
                  " is out of range: the vocabulary has ids 0 to " +
                  std::to_string(config_.vocab - 1) + " (a target < 0 is ignored)");
    }
  }
  if (count_targets(targets.data(), targets.size()) == 0) {
    throw Error("every target is ignored (< 0): there is nothing to learn from");
  }
  run_forward(ids.data(), batch, n);

  const std::size_t d = config_.d_model, M = batch * n, V = config_.vocab;
  const std::size_t row = shape_.row(), width = shape_.q_width(), W = mlp_width_;
  const bool ln = config_.layer_norm;
  resize(probs_, M * V);
  const float loss = cross_entropy_forward(logits_.data(), targets.data(), probs_.data(), M, V);

  grads_.assign(params_.size(), 0.0f);
  resize(d_logits_, M * V);
  cross_entropy_backward(probs_.data(), targets.data(), d_logits_.data(), M, V);

  // logits = h_f · unembedᵀ, h_f = ln_f(x_L) or x_L
  const float* x_last = residual_[config_.layers].data();
  zero(d_resid_, M * d);
  if (ln) {
    zero(d_h_, M * d);
    linear_backward(d_logits_.data(), lnf_.data(), p(unembed_), d_h_.data(), g(unembed_), nullptr,
                    M, d, V, linear_scratch_);
    layernorm_backward(d_h_.data(), x_last, p(lnf_w_), lnf_mean_.data(), lnf_rstd_.data(),
                       d_resid_.data(), g(lnf_w_), g(lnf_b_), M, d);
  } else {
    linear_backward(d_logits_.data(), x_last, p(unembed_), d_resid_.data(), g(unembed_), nullptr, M,
                    d, V, linear_scratch_);
  }

  for (std::size_t l = config_.layers; l-- > 0;) {
    const Layer& w = layers_[l];
    LayerActivations& a = acts_[l];
    // d_resid = ∂L/∂x_{l+1}; x_{l+1} = mid + proj(GELU(fc(ln2(mid)))) with mlp, else mid.
    if (config_.mlp) {
      zero(d_gelu_, M * W);
      zero(d_fc_, M * W);
      linear_backward(d_resid_.data(), a.gelu.data(), p(w.proj_w), d_gelu_.data(), g(w.proj_w),
                      g(w.proj_b), M, W, d, linear_scratch_);
      gelu_backward(d_gelu_.data(), a.fc.data(), d_fc_.data(), M * W, config_.gelu);
      if (ln) {
        zero(d_h_, M * d);
        linear_backward(d_fc_.data(), a.ln2.data(), p(w.fc_w), d_h_.data(), g(w.fc_w), g(w.fc_b), M,
                        d, W, linear_scratch_);
        layernorm_backward(d_h_.data(), a.mid.data(), p(w.ln2_w), a.ln2_mean.data(),
                           a.ln2_rstd.data(), d_resid_.data(), g(w.ln2_w), g(w.ln2_b), M, d);
      } else {
        linear_backward(d_fc_.data(), a.mid.data(), p(w.fc_w), d_resid_.data(), g(w.fc_w),
                        g(w.fc_b), M, d, W, linear_scratch_);
      }
    }
    // d_resid = ∂L/∂mid; mid = x_l + out_proj(attention(in_proj(ln1(x_l))))
    zero(d_ctx_, M * width);
    zero(d_qkv_, M * row);
    linear_backward(d_resid_.data(), a.ctx.data(), p(w.out_w), d_ctx_.data(), g(w.out_w),
                    g(w.out_b), M, width, d, linear_scratch_);
    // An ablated head's context was scaled (zeroed) after A·V: its gradient is scaled alike.
    ablate_heads(l, d_ctx_.data(), M, head_scales_, std::nullopt);
    causal_attention_backward(d_ctx_.data(), a.qkv.data(), a.att.data(), d_qkv_.data(), batch, n,
                              shape_, attention_scratch_);
    if (config_.positional == PositionalKind::Rope) {
      rope_backward(d_qkv_.data(), batch, n, shape_, config_.rope);
    }
    if (ln) {
      zero(d_h_, M * d);
      linear_backward(d_qkv_.data(), a.ln1.data(), p(w.in_w), d_h_.data(), g(w.in_w), g(w.in_b), M,
                      d, row, linear_scratch_);
      layernorm_backward(d_h_.data(), residual_[l].data(), p(w.ln1_w), a.ln1_mean.data(),
                         a.ln1_rstd.data(), d_resid_.data(), g(w.ln1_w), g(w.ln1_b), M, d);
    } else {
      linear_backward(d_qkv_.data(), residual_[l].data(), p(w.in_w), d_resid_.data(), g(w.in_w),
                      g(w.in_b), M, d, row, linear_scratch_);
    }
  }
  input_embedding_backward(d_resid_.data(), ids.data(), g(embed_), g(pos_), batch, n, d);
  return loss;
}

void Model::check_trace_batch(std::size_t batch) {
  if (batch != 1) {
    throw Error("a traced forward follows one sequence: batch must be 1, got " +
                std::to_string(batch) + " (run the others untraced)");
  }
}

const AttentionLayer& Model::traced_layer(std::size_t layer) const {
  if (layer >= traced_layers_.size()) {
    throw Error(traced_layers_.empty()
                    ? "no traced forward yet: call trace() first"
                    : "layer " + std::to_string(layer) + " is out of range: the model has " +
                          std::to_string(traced_layers_.size()) + " layers (0-based)");
  }
  return *traced_layers_[layer];
}

std::vector<std::uint8_t> Model::save_safetensors() const {
  std::vector<safetensors::TensorToWrite> tensors;
  for (const auto& info : table_) {
    tensors.push_back(safetensors::make_f32(info.name, info.shape, parameter_values(info.name)));
  }
  const auto flag = [](bool value) { return std::string(value ? "true" : "false"); };
  std::map<std::string, std::string> metadata{
      {"format", "attention-lens-model"},
      {"vocab", std::to_string(config_.vocab)},
      {"context", std::to_string(config_.context)},
      {"d_model", std::to_string(config_.d_model)},
      {"heads", std::to_string(config_.heads)},
      {"layers", std::to_string(config_.layers)},
      {"positional", positional_kind_name(config_.positional)},
      {"layer_norm", flag(config_.layer_norm)},
      {"mlp", flag(config_.mlp)},
      {"tied", flag(config_.tied)},
      {"bias", flag(config_.bias)},
      {"gelu", gelu_kind_name(config_.gelu)}};
  return safetensors::write(tensors, metadata);
}

void Model::set_parameter(const std::string& name, std::span<const float> values) {
  const ParameterInfo& info = parameter_info(name);
  parameter(name);  // a 2-byte one throws, naming it
  if (values.size() != info.size) {
    throw Error("parameter '" + name + "' " + shape_text(info.shape) + " needs " +
                std::to_string(info.size) + " values, got " + std::to_string(values.size()));
  }
  std::copy(values.begin(), values.end(), params_.begin() + std::ptrdiff_t(info.offset));
}

void Model::load_safetensors(std::span<const std::uint8_t> bytes) {
  if (has_half_parameters()) {
    throw Error(
        "this model keeps a checkpoint's 2-byte weights: load the checkpoint again instead");
  }
  const auto file = safetensors::File::parse(bytes);
  for (const auto& info : file.tensors()) {
    bool known = false;
    for (const auto& mine : table_) known = known || mine.name == info.name;
    if (!known) {
      throw Error("the checkpoint's tensor '" + info.name + "' " + shape_text(info.shape) +
                  " is not a parameter of this model (another config?)");
    }
  }
  AlignedVector<float> loaded(params_.size());
  for (const auto& mine : table_) {
    if (!file.contains(mine.name)) {
      throw Error("the checkpoint has no tensor '" + mine.name + "' " + shape_text(mine.shape) +
                  ", which this model needs (another config?)");
    }
    const auto& info = file.info(mine.name);
    if (info.shape != mine.shape) {
      throw Error("the checkpoint's tensor '" + mine.name + "' has shape " +
                  shape_text(info.shape) + ", this model needs " + shape_text(mine.shape) +
                  " (another config?)");
    }
    if (info.dtype != safetensors::DType::F32) {
      throw Error("the checkpoint's tensor '" + mine.name + "' is " +
                  safetensors::dtype_name(info.dtype) + ", expected F32");
    }
    const auto values = file.f32(mine.name);
    std::copy(values.begin(), values.end(), loaded.begin() + std::ptrdiff_t(mine.offset));
  }
  std::copy(loaded.begin(), loaded.end(), params_.begin());  // the buffer stays where it is
  packed_current_ = false;
  traced_layers_.clear();  // they borrowed the old weights
}

}  // namespace attn
