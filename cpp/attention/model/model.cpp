// The model: parameters laid out and initialised, the forward (every block through block.cpp),
// ablation, packing and traces, see model.hpp. The backward is model_backward.cpp, files
// model_files.cpp, the KV cache kv_cache.cpp.
#include "attention/model/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "attention/error.hpp"
#include "attention/layer/layer.hpp"
#include "attention/message_text.hpp"
#include "attention/ops/embedding.hpp"
#include "attention/ops/positional.hpp"
#include "attention/ops/softcap.hpp"
#include "attention/ops/vec.hpp"
#include "attention/rng.hpp"

namespace attn {

namespace {

void resize(AlignedVector<float>& buffer, std::size_t size) {
  buffer.resize(size);
}

}  // namespace

Model::Model(const ModelConfig& config) : config_(config) {
  lay_out({});
  if (!config_.checkpoint) grads_.assign(params_.size(), 0.0f);
  if (!config_.checkpoint) initialise();
}

Model::Model(const ModelConfig& config,
             const std::vector<std::pair<std::string, HalfKind>>& kept_half,
             const std::vector<KeptQuantized>& kept_quantized)
    : config_(config) {
  if (!config_.checkpoint) throw Error("only a checkpoint's model keeps weights 2-byte");
  lay_out(kept_half, kept_quantized);
}

void Model::set_rope_frequencies(const std::vector<double>& frequencies, RopeScaling scaling) {
  for (const double theta : frequencies) {
    if (!(std::isfinite(theta) && theta > 0.0)) {
      throw Error("RoPE's frequencies must be finite and above 0, got " + std::to_string(theta));
    }
  }
  ModelConfig config = config_;
  for (BlockConfig& block : config.blocks) {
    block.rope.frequencies = frequencies;
    block.rope.scaling = scaling;
  }
  validate(config);  // the count: one per rotated pair
  config_ = std::move(config);
}

void Model::lay_out(const std::vector<std::pair<std::string, HalfKind>>& kept_half,
                    const std::vector<KeptQuantized>& kept_quantized) {
  table_ = parameter_layout(config_);
  std::size_t floats = 0;
  halves_.clear();
  quantized_.clear();
  for (auto& info : table_) {
    for (const auto& [name, kind] : kept_half) {
      if (name == info.name) {
        if (info.shape.size() != 2) throw Error("only a weight matrix is kept 2-byte, not " + name);
        info.half = kind;
      }
    }
    const KeptQuantized* blocks = nullptr;
    for (const KeptQuantized& kept : kept_quantized) {
      if (kept.name == info.name) blocks = &kept;
    }
    if (blocks != nullptr) {
      if (info.shape.size() != 2 || info.half) {
        throw Error("only a weight matrix is kept quantized, not " + info.name);
      }
      auto weights = std::make_unique<QuantizedWeights>();
      weights->cols = info.shape[1];
      for (const auto& [type, rows] : blocks->parts) {
        weights->parts.push_back({weights->rows, QuantizedMatrix(type, rows, weights->cols)});
        weights->rows += rows;
      }
      if (weights->rows != info.shape[0]) {
        throw Error("the quantized parts of " + info.name + " hold " +
                    std::to_string(weights->rows) + " rows, not its " +
                    std::to_string(info.shape[0]));
      }
      info.quantized = true;
      info.offset = quantized_.size();
      quantized_.push_back(std::move(weights));
    } else if (info.half) {  // its own buffer: wasm32 grows its heap by less than 2 GB at a time
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
      if (info.name == name) return info.half || info.quantized ? kNone : info.offset;
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
    Layer layer;
    layer.ln1_w = offset(prefix + "ln1.weight");
    layer.ln1_b = offset(prefix + "ln1.bias");
    layer.in_w = offset(prefix + "attn.in_proj_weight");
    layer.in_b = offset(prefix + "attn.in_proj_bias");
    layer.out_w = offset(prefix + "attn.out_proj.weight");
    layer.out_b = offset(prefix + "attn.out_proj.bias");
    layer.ln2_w = offset(prefix + "ln2.weight");
    layer.ln2_b = offset(prefix + "ln2.bias");
    layer.fc_w = offset(prefix + "mlp.fc.weight");
    layer.fc_b = offset(prefix + "mlp.fc.bias");
    layer.proj_w = offset(prefix + "mlp.proj.weight");
    layer.proj_b = offset(prefix + "mlp.proj.bias");
    layer.ln1_post_w = offset(prefix + "ln1_post.weight");
    layer.ln1_post_b = offset(prefix + "ln1_post.bias");
    layer.ln2_post_w = offset(prefix + "ln2_post.weight");
    layer.ln2_post_b = offset(prefix + "ln2_post.bias");
    layer.q_norm_w = offset(prefix + "attn.q_norm.weight");
    layer.k_norm_w = offset(prefix + "attn.k_norm.weight");
    layer.in = stored(prefix + "attn.in_proj_weight");
    layer.out = stored(prefix + "attn.out_proj.weight");
    layer.fc = stored(prefix + "mlp.fc.weight");
    layer.proj = stored(prefix + "mlp.proj.weight");
    layers_.push_back(layer);
  }
}

StoredWeights Model::stored(const std::string& name) const {
  for (const auto& info : table_) {
    if (info.name != name) continue;
    if (info.half) return StoredWeights(halves_[info.offset].data(), *info.half);
    if (info.quantized) return StoredWeights(quantized_[info.offset].get());
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
                            name.find(".ln2.") != std::string::npos ||
                            name.find("_post.") != std::string::npos ||
                            name.find("_norm.") != std::string::npos;
    if (layer_norm) {  // weight 1 (Gemma's 1 + w: 0) and bias 0, the identity's
      const bool one = name.ends_with(".weight") && config_.norm != NormKind::GemmaRmsNorm;
      std::fill(values.begin(), values.end(), one ? 1.0f : 0.0f);
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
  if (info.quantized) {
    throw Error("parameter '" + name +
                "' is kept in its GGUF file's quantized blocks: it has no float32 copy to change");
  }
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
  } else if (info.quantized) {
    quantized_[info.offset]->dequantize_values(0, info.size, values.data());
  } else {
    std::copy_n(params_.data() + info.offset, info.size, values.data());
  }
  return values;
}

std::span<std::uint16_t> Model::half_parameter(const std::string& name) {
  const auto& info = parameter_info(name);
  packed_current_ = false;
  if (!info.half) throw Error("parameter '" + name + "' is not kept 2-byte");
  return halves_[info.offset];
}

QuantizedWeights& Model::quantized_parameter(const std::string& name) {
  const auto& info = parameter_info(name);
  packed_current_ = false;
  if (!info.quantized) throw Error("parameter '" + name + "' is not kept quantized");
  return *quantized_[info.offset];
}

std::uint64_t Model::parameter_bytes() const {
  std::uint64_t bytes = std::uint64_t{params_.size()} * 4;
  for (const auto& half : halves_) bytes += std::uint64_t{half.size()} * 2;
  for (const auto& blocks : quantized_) bytes += blocks->bytes();
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
  return forward(ids, batch, n, ForwardRun{ablation, nullptr, all_logits});
}

ModelOutput Model::forward(std::span<const std::int32_t> ids, std::size_t batch, std::size_t n,
                           const ForwardRun& run) {
  check_ids(ids, batch, n);
  if (run.extra) check_ablation(*run.extra);
  if (run.heads != nullptr) {
    run_forward(ids.data(), batch, n, scales_of(*run.heads), run.extra, run.all_logits);
  } else {
    run_forward(ids.data(), batch, n, head_scales_, run.extra, run.all_logits);
  }
  ModelOutput out;
  out.logits =
      std::span<const float>(logits_.data(), (run.all_logits ? batch * n : batch) * config_.vocab);
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

std::vector<std::vector<float>> Model::scales_of(const std::vector<HeadAblation>& heads) const {
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
  return scales;
}

void Model::ablate(std::vector<HeadAblation> heads) {
  head_scales_ = scales_of(heads);
  ablated_ = std::move(heads);
}

BlockAblation Model::block_ablation(std::size_t layer,
                                    const std::vector<std::vector<float>>& scales,
                                    std::optional<HeadAblation> extra) {
  BlockAblation ablation;
  if (!scales.empty()) ablation.scales = scales[layer];
  if (extra && extra->layer == layer) {
    ablation.extra_head = extra->head;
    ablation.extra_scale = extra->scale;
  }
  return ablation;
}

BlockWeights Model::block_weights(std::size_t layer) const {
  const Layer& w = layers_[layer];
  const AttentionShape shape = attention_shape(config_, layer);
  const std::size_t d = config_.d_model, slot = layer * kProjections;
  const auto linear = [&](const StoredWeights& weight, std::size_t bias, Projection projection,
                          std::size_t in, std::size_t out) {
    return BlockLinear{weight, p(bias), packed(slot + projection), in, out};
  };
  BlockWeights weights;
  weights.ln1_w = p(w.ln1_w);
  weights.ln1_b = p(w.ln1_b);
  weights.ln2_w = p(w.ln2_w);
  weights.ln2_b = p(w.ln2_b);
  weights.ln1_post_w = p(w.ln1_post_w);
  weights.ln1_post_b = p(w.ln1_post_b);
  weights.ln2_post_w = p(w.ln2_post_w);
  weights.ln2_post_b = p(w.ln2_post_b);
  weights.q_norm_w = p(w.q_norm_w);
  weights.k_norm_w = p(w.k_norm_w);
  weights.qkv = linear(w.in, w.in_b, kIn, d, shape.row());
  weights.out = linear(w.out, w.out_b, kOut, shape.q_width(), d);
  if (has_mlp(config_, layer)) {
    weights.fc = linear(w.fc, w.fc_b, kFc, d, fc_rows(config_, layer));
    weights.proj = linear(w.proj, w.proj_b, kProj, mlp_width(config_), d);
  }
  return weights;
}

void Model::logits_of(const float* x, std::size_t rows, AlignedVector<float>& normed,
                      AlignedVector<float>& mean, AlignedVector<float>& rstd, float* logits,
                      LinearScratch& scratch, std::size_t pack_values) const {
  const std::size_t d = config_.d_model;
  if (config_.norm != NormKind::None) {
    normed.resize(rows * d);
    norm_forward(config_, x, p(lnf_w_), p(lnf_b_), normed.data(), mean, rstd, rows);
    x = normed.data();
  }
  const BlockLinear unembed{unembed_weights_, nullptr, packed(config_.layers * kProjections), d,
                            config_.vocab};
  unembed.forward(x, logits, rows, scratch, pack_values);
  if (config_.final_softcap > 0.0) {  // row by row: a row's values never depend on the others
    for (std::size_t r = 0; r < rows; ++r) {
      softcap_forward(logits + r * config_.vocab, config_.vocab, float(config_.final_softcap));
    }
  }
}

void Model::embed_rows(const std::int32_t* ids, const float* pos, float* out, std::size_t batch,
                       std::size_t n) const {
  const std::size_t d = config_.d_model;
  input_embedding_forward(ids, embed_weights_, pos, out, batch, n, d);
  // Gemma: embedding × √d_model (rounded to the checkpoint's dtype), in float as transformers.
  if (config_.embedding_scale != 1.0)
    vec::scale(float(config_.embedding_scale), out, batch * n * d);
}

const float* Model::positions(std::size_t n, AlignedVector<float>& sinusoidal) const {
  if (config_.positional == PositionalKind::Learned) return p(pos_);
  if (config_.positional != PositionalKind::Sinusoidal) return nullptr;
  resize(sinusoidal, n * config_.d_model);
  sinusoidal_encoding(MatView(sinusoidal.data(), n, config_.d_model));
  return sinusoidal.data();
}

void Model::embedding(std::span<const std::int32_t> ids, AlignedVector<float>& out) const {
  check_ids(ids, 1, ids.size());
  AlignedVector<float> sinusoidal;
  resize(out, ids.size() * config_.d_model);
  embed_rows(ids.data(), positions(ids.size(), sinusoidal), out.data(), 1, ids.size());
}

void Model::run_sequences(std::size_t first, std::span<const float> x,
                          std::vector<std::vector<CachedSequence>>& sequences,
                          const RunHooks* hooks, AlignedVector<float>& out, bool last_rows_only) {
  const std::size_t d = config_.d_model, L = config_.layers;
  if (first >= L || sequences.size() != L - first) {
    throw Error("run_sequences: blocks " + std::to_string(first) + " … " + std::to_string(L - 1) +
                " need one list of sequences each, got " + std::to_string(sequences.size()));
  }
  std::size_t M = 0;
  for (const CachedSequence& s : sequences[0]) M += s.rows;
  if (x.size() != M * d) {
    throw Error("run_sequences: x has " + std::to_string(x.size()) + " values, expected " +
                std::to_string(M) + " rows of " + std::to_string(d));
  }
  pack_weights();
  AlignedVector<float> in(x.begin(), x.end());
  resize(out, M * d);
  for (std::size_t l = first; l < L; ++l) {
    if (hooks != nullptr) hooks->resid_pre(l, in.data(), M);
    BlockRun run;
    run.sequences = sequences[l - first];
    run.ablation = block_ablation(l, head_scales_, std::nullopt);
    run.hooks = hooks;
    run.last_rows_only = last_rows_only && l + 1 == L;
    block_forward(config_, l, block_weights(l), in.data(), out.data(), run, sequence_acts_,
                  linear_scratch_, attention_scratch_);
    if (l + 1 < L) std::swap(in, out);
  }
}

void Model::logit_differences(const float* x, std::size_t rows, std::int32_t a, std::int32_t b,
                              double* out) const {
  const std::size_t d = config_.d_model;
  AlignedVector<float> normed, mean, rstd;
  if (config_.norm != NormKind::None) {
    normed.resize(rows * d);
    norm_forward(config_, x, p(lnf_w_), p(lnf_b_), normed.data(), mean, rstd, rows);
    x = normed.data();
  }
  std::vector<float> unembed_a(d), unembed_b(d);
  unembed_weights_.rows(std::size_t(a), 1, d, unembed_a.data());
  unembed_weights_.rows(std::size_t(b), 1, d, unembed_b.data());
  const double cap = config_.final_softcap;
  for (std::size_t r = 0; r < rows; ++r) {
    double logit_a = 0.0, logit_b = 0.0;
    for (std::size_t i = 0; i < d; ++i) {
      logit_a += double(x[r * d + i]) * double(unembed_a[i]);
      logit_b += double(x[r * d + i]) * double(unembed_b[i]);
    }
    if (cap > 0.0) {
      logit_a = cap * std::tanh(logit_a / cap);
      logit_b = cap * std::tanh(logit_b / cap);
    }
    out[r] = logit_a - logit_b;
  }
}

void Model::run_forward(const std::int32_t* ids, std::size_t batch, std::size_t n,
                        const std::vector<std::vector<float>>& scales,
                        std::optional<HeadAblation> ablation, bool all_logits, KvCache* cache) {
  const std::size_t d = config_.d_model, M = batch * n, V = config_.vocab;
  pack_weights();
  batch_ = batch;
  n_ = n;
  residual_.resize(config_.layers + 1);
  acts_.resize(config_.layers);
  for (auto& r : residual_) resize(r, M * d);

  embed_rows(ids, positions(n, sinusoidal_), residual_[0].data(), batch, n);

  for (std::size_t l = 0; l < config_.layers; ++l) {
    BlockRun run;
    run.batch = batch;
    run.rows = n;
    run.ablation = block_ablation(l, scales, ablation);
    KvLayerView view;
    if (cache != nullptr) {
      view = {cache->keys_[l].data(), cache->values_[l].data(), 0};
      run.cache = &view;
    }
    block_forward(config_, l, block_weights(l), residual_[l].data(), residual_[l + 1].data(), run,
                  acts_[l], linear_scratch_, attention_scratch_);
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
  resize(logits_, rows * V);
  logits_of(last, rows, lnf_, lnf_mean_, lnf_rstd_, logits_.data(), linear_scratch_,
            kLinearPackValues);
}

void Model::pack_weights() {
  if (packed_current_) return;
  const std::size_t d = config_.d_model, L = config_.layers;
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
    const AttentionShape shape = attention_shape(config_, l);
    const bool mlp = has_mlp(config_, l);
    pack(l * kProjections + kIn, w.in, d, shape.row());
    pack(l * kProjections + kOut, w.out, shape.q_width(), d);
    pack(l * kProjections + kFc, mlp ? w.fc : StoredWeights{}, d, fc_rows(config_, l));
    pack(l * kProjections + kProj, mlp ? w.proj : StoredWeights{}, mlp_width(config_), d);
  }
  pack(L * kProjections, unembed_weights_, d, config_.vocab);
  packed_current_ = true;
}

std::span<const float> Model::attention_input(std::size_t layer) const {
  if (layer >= config_.layers) {
    throw Error("layer " + std::to_string(layer) + " is out of range: the model has " +
                std::to_string(config_.layers) + " layers (0-based)");
  }
  if (batch_ * n_ == 0) throw Error("no forward yet: run the model first");
  return {attention_input_rows(layer).data(), batch_ * n_ * config_.d_model};
}

std::span<const float> Model::residual(std::size_t index) const {
  if (index > config_.layers) {
    throw Error("residual " + std::to_string(index) + " is out of range: the model has " +
                std::to_string(config_.layers) + " layers, residuals 0 to " +
                std::to_string(config_.layers));
  }
  if (batch_ * n_ == 0 || residual_.size() != config_.layers + 1) {
    throw Error("no forward yet: run the model first");
  }
  return {residual_[index].data(), batch_ * n_ * config_.d_model};
}

const BlockActivations& Model::activations(std::size_t layer) const {
  if (layer >= config_.layers) {
    throw Error("layer " + std::to_string(layer) + " is out of range: the model has " +
                std::to_string(config_.layers) + " layers (0-based)");
  }
  if (batch_ * n_ == 0 || acts_.size() != config_.layers) {
    throw Error("no forward yet: run the model first");
  }
  return acts_[layer];
}

void Model::logits_of_residual(const float* x, std::size_t rows,
                               AlignedVector<float>& logits) const {
  AlignedVector<float> normed, mean, rstd;
  LinearScratch scratch;
  logits.resize(rows * config_.vocab);
  logits_of(x, rows, normed, mean, rstd, logits.data(), scratch, kLinearPackValues);
}

const AlignedVector<float>& Model::attention_input_rows(std::size_t layer) const {
  return has_pre_norm(config_, layer) ? acts_[layer].ln1 : residual_[layer];
}

LayerConfig Model::layer_config(std::size_t layer) const {
  if (layer >= config_.layers) {
    throw Error("layer " + std::to_string(layer) + " is out of range: the model has " +
                std::to_string(config_.layers) + " layers (0-based)");
  }
  const AttentionShape shape = attention_shape(config_, layer);
  const BlockConfig& block = config_.blocks[layer];
  LayerConfig layer_config;
  layer_config.d_model = config_.d_model;
  layer_config.heads = shape.heads;
  layer_config.kv_heads = shape.kv_heads;
  layer_config.head_dim = shape.head_dim;
  layer_config.bias = config_.bias.qkv;
  layer_config.out_bias = config_.bias.out;
  layer_config.positional =
      config_.positional == PositionalKind::Rope ? PositionalKind::Rope : PositionalKind::None;
  if (layer_config.positional == PositionalKind::Rope) layer_config.rope = block.rope;
  layer_config.scale = block.attention_scale;
  layer_config.softcap = block.logit_softcap;
  layer_config.qk_norm = block.qk_norm;
  layer_config.qk_norm_weight =
      config_.norm == NormKind::GemmaRmsNorm ? RmsNormWeight::OnePlus : RmsNormWeight::Plain;
  layer_config.qk_norm_eps = config_.norm_eps;
  return layer_config;
}

void Model::trace(std::span<const std::int32_t> ids, std::size_t n, int trace_head) {
  check_ids(ids, 1, n);
  run_forward(ids.data(), 1, n, head_scales_);
  const std::size_t d = config_.d_model;
  const auto block = [&](std::size_t offset, std::size_t size) {
    return offset == kNone ? std::span<const float>{}
                           : std::span<const float>(&params_[offset], size);
  };
  traced_layers_.clear();
  traced_weights_.clear();
  for (std::size_t l = 0; l < config_.layers; ++l) {
    const AttentionShape shape = attention_shape(config_, l);
    const LayerConfig layer_config = this->layer_config(l);
    // The block's attention weights as they are in the buffer: the layer borrows them.
    const std::size_t row = shape.row(), width = shape.q_width();
    LayerWeightsView weights;
    weights.in_proj_weight = traced_weights(layers_[l].in_w, layers_[l].in, row * d);
    weights.in_proj_bias = block(layers_[l].in_b, row);
    weights.out_proj_weight = traced_weights(layers_[l].out_w, layers_[l].out, d * width);
    weights.out_proj_bias = block(layers_[l].out_b, d);
    weights.q_norm = block(layers_[l].q_norm_w, q_norm_width(config_, l));
    weights.k_norm = block(layers_[l].k_norm_w, k_norm_width(config_, l));
    auto layer = std::make_unique<AttentionLayer>(layer_config, weights);
    ForwardOptions options;
    options.n = n;
    options.mask.kind = shape.window != 0 ? MaskKind::SlidingWindow : MaskKind::Causal;
    if (shape.window != 0) options.mask.window = shape.window;
    options.want_trace = true;
    options.trace_head = trace_head;
    const auto& input = attention_input_rows(l);
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

}  // namespace attn
