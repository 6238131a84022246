// The small transformer: config checks, parameter layout and init, forward, backward and
// checkpoints, see model.hpp.
#include "attention/model/model.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "attention/error.hpp"
#include "attention/io/safetensors.hpp"
#include "attention/layer/layer.hpp"
#include "attention/ops/cross_entropy.hpp"
#include "attention/ops/embedding.hpp"
#include "attention/ops/layernorm.hpp"
#include "attention/ops/rope.hpp"
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

}  // namespace

void validate(const ModelConfig& c) {
  check_range("vocab", c.vocab, 2, c.checkpoint ? kMaxCheckpointVocab : kMaxModelVocab);
  check_range("context", c.context, 1, c.checkpoint ? kMaxCheckpointContext : kMaxModelContext);
  check_range("d_model", c.d_model, 1, c.checkpoint ? kMaxCheckpointDModel : kMaxModelDModel);
  check_range("heads", c.heads, 1, c.d_model);
  check_range("layers", c.layers, 1, c.checkpoint ? kMaxCheckpointLayers : kMaxModelLayers);
  if (c.d_model % c.heads != 0) {
    throw Error("d_model must be a multiple of heads: d_model " + std::to_string(c.d_model) +
                " is not divisible by heads " + std::to_string(c.heads));
  }
  if (c.positional == PositionalKind::Alibi) {
    throw Error(
        "positional must be 'none', 'sinusoidal', 'learned' or 'rope' for a model, got "
        "'alibi'");
  }
  if (c.positional == PositionalKind::Rope && (c.d_model / c.heads) % 2 != 0) {
    throw Error(
        "positional 'rope' rotates pairs of dimensions: it needs an even d_k = d_model / "
        "heads, got " +
        std::to_string(c.d_model / c.heads));
  }
}

Model::Model(const ModelConfig& config) : config_(config) {
  validate(config_);
  const std::size_t d = config_.d_model, v = config_.vocab;
  add_parameter("embed.weight", {v, d});
  if (config_.positional == PositionalKind::Learned)
    add_parameter("pos.weight", {config_.context, d});
  for (std::size_t i = 0; i < config_.layers; ++i) {
    const std::string prefix = "layers." + std::to_string(i) + ".";
    if (config_.layer_norm) {
      add_parameter(prefix + "ln1.weight", {d});
      add_parameter(prefix + "ln1.bias", {d});
    }
    add_parameter(prefix + "attn.in_proj_weight", {3 * d, d});
    if (config_.bias) add_parameter(prefix + "attn.in_proj_bias", {3 * d});
    add_parameter(prefix + "attn.out_proj.weight", {d, d});
    if (config_.bias) add_parameter(prefix + "attn.out_proj.bias", {d});
    if (config_.mlp) {
      if (config_.layer_norm) {
        add_parameter(prefix + "ln2.weight", {d});
        add_parameter(prefix + "ln2.bias", {d});
      }
      add_parameter(prefix + "mlp.fc.weight", {4 * d, d});
      if (config_.bias) add_parameter(prefix + "mlp.fc.bias", {4 * d});
      add_parameter(prefix + "mlp.proj.weight", {d, 4 * d});
      if (config_.bias) add_parameter(prefix + "mlp.proj.bias", {d});
    }
  }
  if (config_.layer_norm) {
    add_parameter("ln_f.weight", {d});
    add_parameter("ln_f.bias", {d});
  }
  if (!config_.tied) add_parameter("unembed.weight", {v, d});

  const auto offset = [&](const std::string& name) {
    for (const auto& info : table_) {
      if (info.name == name) return info.offset;
    }
    return kNone;
  };
  params_.assign(table_.empty() ? 0 : table_.back().offset + table_.back().size, 0.0f);
  if (!config_.checkpoint) grads_.assign(params_.size(), 0.0f);
  embed_ = offset("embed.weight");
  pos_ = offset("pos.weight");
  lnf_w_ = offset("ln_f.weight");
  lnf_b_ = offset("ln_f.bias");
  unembed_ = config_.tied ? embed_ : offset("unembed.weight");
  for (std::size_t i = 0; i < config_.layers; ++i) {
    const std::string prefix = "layers." + std::to_string(i) + ".";
    layers_.push_back({offset(prefix + "ln1.weight"), offset(prefix + "ln1.bias"),
                       offset(prefix + "attn.in_proj_weight"), offset(prefix + "attn.in_proj_bias"),
                       offset(prefix + "attn.out_proj.weight"),
                       offset(prefix + "attn.out_proj.bias"), offset(prefix + "ln2.weight"),
                       offset(prefix + "ln2.bias"), offset(prefix + "mlp.fc.weight"),
                       offset(prefix + "mlp.fc.bias"), offset(prefix + "mlp.proj.weight"),
                       offset(prefix + "mlp.proj.bias")});
  }
  if (!config_.checkpoint) initialise();
}

void Model::add_parameter(const std::string& name, std::vector<std::size_t> shape) {
  ParameterInfo info;
  info.name = name;
  info.size = 1;
  for (std::size_t s : shape) info.size *= s;
  info.shape = std::move(shape);
  info.offset = table_.empty() ? 0 : table_.back().offset + table_.back().size;
  table_.push_back(std::move(info));
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
  return {params_.data() + info.offset, info.size};
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
                           std::optional<HeadAblation> ablation) {
  check_ids(ids, batch, n);
  if (ablation && (ablation->layer >= config_.layers || ablation->head >= config_.heads)) {
    throw Error("cannot ablate layer " + std::to_string(ablation->layer) + " head " +
                std::to_string(ablation->head) + ": the model has layers 0 to " +
                std::to_string(config_.layers - 1) + " and heads 0 to " +
                std::to_string(config_.heads - 1));
  }
  run_forward(ids.data(), batch, n, ablation);
  ModelOutput out;
  out.logits = std::span<const float>(logits_.data(), batch * n * config_.vocab);
  for (const auto& layer : acts_) {
    out.attention.emplace_back(layer.att.data(), batch * config_.heads * n * n);
  }
  return out;
}

void Model::run_forward(const std::int32_t* ids, std::size_t batch, std::size_t n,
                        std::optional<HeadAblation> ablation) {
  const std::size_t d = config_.d_model, H = config_.heads, M = batch * n, V = config_.vocab;
  const bool ln = config_.layer_norm;
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
  input_embedding_forward(ids, p(embed_), pos, residual_[0].data(), batch, n, d);

  for (std::size_t l = 0; l < config_.layers; ++l) {
    const Layer& w = layers_[l];
    LayerActivations& a = acts_[l];
    const float* x = residual_[l].data();
    const float* h = x;
    if (ln) {
      resize(a.ln1, M * d);
      resize(a.ln1_mean, M);
      resize(a.ln1_rstd, M);
      layernorm_forward(x, p(w.ln1_w), p(w.ln1_b), a.ln1.data(), a.ln1_mean.data(),
                        a.ln1_rstd.data(), M, d);
      h = a.ln1.data();
    }
    resize(a.qkv, M * 3 * d);
    resize(a.att, batch * H * n * n);
    resize(a.ctx, M * d);
    resize(a.mid, M * d);
    linear_forward(h, p(w.in_w), p(w.in_b), a.qkv.data(), M, d, 3 * d, linear_scratch_);
    if (config_.positional == PositionalKind::Rope) rope_forward(a.qkv.data(), batch, n, d, H);
    causal_attention_forward(a.qkv.data(), a.att.data(), a.ctx.data(), batch, n, d, H,
                             attention_scratch_);
    if (ablation && ablation->layer == l) {
      const std::size_t d_k = d / H;
      for (std::size_t row = 0; row < M; ++row) {  // ctx [M, d]: head h owns columns h·d_k …
        float* head = &a.ctx[row * d + ablation->head * d_k];
        std::fill(head, head + d_k, 0.0f);
      }
    }
    linear_forward(a.ctx.data(), p(w.out_w), p(w.out_b), a.mid.data(), M, d, d, linear_scratch_);
    vec::add(x, a.mid.data(), M * d);
    float* next = residual_[l + 1].data();
    if (!config_.mlp) {
      std::copy(a.mid.begin(), a.mid.end(), next);
      continue;
    }
    const float* h2 = a.mid.data();
    if (ln) {
      resize(a.ln2, M * d);
      resize(a.ln2_mean, M);
      resize(a.ln2_rstd, M);
      layernorm_forward(a.mid.data(), p(w.ln2_w), p(w.ln2_b), a.ln2.data(), a.ln2_mean.data(),
                        a.ln2_rstd.data(), M, d);
      h2 = a.ln2.data();
    }
    resize(a.fc, M * 4 * d);
    resize(a.gelu, M * 4 * d);
    linear_forward(h2, p(w.fc_w), p(w.fc_b), a.fc.data(), M, d, 4 * d, linear_scratch_);
    gelu_forward(a.fc.data(), a.gelu.data(), M * 4 * d, config_.gelu);
    linear_forward(a.gelu.data(), p(w.proj_w), p(w.proj_b), next, M, 4 * d, d, linear_scratch_);
    vec::add(a.mid.data(), next, M * d);
  }

  const float* last = residual_[config_.layers].data();
  if (ln) {
    resize(lnf_, M * d);
    resize(lnf_mean_, M);
    resize(lnf_rstd_, M);
    layernorm_forward(last, p(lnf_w_), p(lnf_b_), lnf_.data(), lnf_mean_.data(), lnf_rstd_.data(),
                      M, d);
    last = lnf_.data();
  }
  resize(logits_, M * V);
  linear_forward(last, p(unembed_), nullptr, logits_.data(), M, d, V, linear_scratch_);
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
  for (std::size_t l = 0; l < config_.layers; ++l) {
    LayerConfig layer_config;
    layer_config.d_model = d;
    layer_config.heads = config_.heads;
    layer_config.bias = config_.bias;
    layer_config.positional =
        config_.positional == PositionalKind::Rope ? PositionalKind::Rope : PositionalKind::None;
    // The block's attention weights as they are in the buffer: the layer borrows them.
    const LayerWeightsView weights{block(layers_[l].in_w, 3 * d * d), block(layers_[l].in_b, 3 * d),
                                   block(layers_[l].out_w, d * d), block(layers_[l].out_b, d)};
    auto layer = std::make_unique<AttentionLayer>(layer_config, weights);
    ForwardOptions options;
    options.n = n;
    options.mask.kind = MaskKind::Causal;
    options.want_trace = true;
    options.trace_head = trace_head;
    const auto& input = config_.layer_norm ? acts_[l].ln1 : residual_[l];
    layer->forward(std::span<const float>(input.data(), n * d), options);
    traced_layers_.push_back(std::move(layer));
  }
}

float Model::loss_and_gradients(std::span<const std::int32_t> ids,
                                std::span<const std::int32_t> targets, std::size_t batch,
                                std::size_t n) {
  check_ids(ids, batch, n);
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

  const std::size_t d = config_.d_model, H = config_.heads, M = batch * n, V = config_.vocab;
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
      zero(d_gelu_, M * 4 * d);
      zero(d_fc_, M * 4 * d);
      linear_backward(d_resid_.data(), a.gelu.data(), p(w.proj_w), d_gelu_.data(), g(w.proj_w),
                      g(w.proj_b), M, 4 * d, d, linear_scratch_);
      gelu_backward(d_gelu_.data(), a.fc.data(), d_fc_.data(), M * 4 * d, config_.gelu);
      if (ln) {
        zero(d_h_, M * d);
        linear_backward(d_fc_.data(), a.ln2.data(), p(w.fc_w), d_h_.data(), g(w.fc_w), g(w.fc_b), M,
                        d, 4 * d, linear_scratch_);
        layernorm_backward(d_h_.data(), a.mid.data(), p(w.ln2_w), a.ln2_mean.data(),
                           a.ln2_rstd.data(), d_resid_.data(), g(w.ln2_w), g(w.ln2_b), M, d);
      } else {
        linear_backward(d_fc_.data(), a.mid.data(), p(w.fc_w), d_resid_.data(), g(w.fc_w),
                        g(w.fc_b), M, d, 4 * d, linear_scratch_);
      }
    }
    // d_resid = ∂L/∂mid; mid = x_l + out_proj(attention(in_proj(ln1(x_l))))
    zero(d_ctx_, M * d);
    zero(d_qkv_, M * 3 * d);
    linear_backward(d_resid_.data(), a.ctx.data(), p(w.out_w), d_ctx_.data(), g(w.out_w),
                    g(w.out_b), M, d, d, linear_scratch_);
    causal_attention_backward(d_ctx_.data(), a.qkv.data(), a.att.data(), d_qkv_.data(), batch, n, d,
                              H, attention_scratch_);
    if (config_.positional == PositionalKind::Rope) rope_backward(d_qkv_.data(), batch, n, d, H);
    if (ln) {
      zero(d_h_, M * d);
      linear_backward(d_qkv_.data(), a.ln1.data(), p(w.in_w), d_h_.data(), g(w.in_w), g(w.in_b), M,
                      d, 3 * d, linear_scratch_);
      layernorm_backward(d_h_.data(), residual_[l].data(), p(w.ln1_w), a.ln1_mean.data(),
                         a.ln1_rstd.data(), d_resid_.data(), g(w.ln1_w), g(w.ln1_b), M, d);
    } else {
      linear_backward(d_qkv_.data(), residual_[l].data(), p(w.in_w), d_resid_.data(), g(w.in_w),
                      g(w.in_b), M, d, 3 * d, linear_scratch_);
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
    tensors.push_back(safetensors::make_f32(
        info.name, info.shape, std::span<const float>(params_.data() + info.offset, info.size)));
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
  if (values.size() != info.size) {
    throw Error("parameter '" + name + "' " + shape_text(info.shape) + " needs " +
                std::to_string(info.size) + " values, got " + std::to_string(values.size()));
  }
  std::copy(values.begin(), values.end(), params_.begin() + std::ptrdiff_t(info.offset));
}

void Model::load_safetensors(std::span<const std::uint8_t> bytes) {
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
  traced_layers_.clear();                                    // they borrowed the old weights
}

}  // namespace attn
