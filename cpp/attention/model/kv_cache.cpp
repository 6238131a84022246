// Generation's KV cache: Model::prefill (a prompt's forward, its keys and values kept) and
// Model::decode (one new position over the cache), see model.hpp. decode runs the full forward's
// kernels on one row, so each value is summed in the order the forward sums it.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "attention/error.hpp"
#include "attention/model/model.hpp"
#include "attention/ops/embedding.hpp"
#include "attention/ops/gelu.hpp"
#include "attention/ops/matmul.hpp"
#include "attention/ops/positional.hpp"
#include "attention/ops/rope.hpp"
#include "attention/ops/swiglu.hpp"
#include "attention/ops/vec.hpp"

namespace attn {

ModelOutput Model::prefill(std::span<const std::int32_t> ids, std::size_t capacity,
                           KvCache& cache) {
  const std::size_t n = ids.size();
  check_ids(ids, 1, n);
  if (capacity < n || capacity > config_.context) {
    throw Error("a KV cache for a prompt of " + std::to_string(n) + " tokens needs room for " +
                std::to_string(n) + " to " + std::to_string(config_.context) +
                " positions (the context), got " + std::to_string(capacity));
  }
  run_forward(ids.data(), 1, n, std::nullopt, false);

  const std::size_t layers = config_.layers, width = shape_.kv_width(), row = shape_.row();
  const std::size_t q_width = shape_.q_width();
  cache.model_ = this;
  cache.length_ = n;
  cache.capacity_ = capacity;
  cache.width_ = width;
  cache.head_scales_ = head_scales_;
  cache.keys_.resize(layers);
  cache.values_.resize(layers);
  cache.attention_.resize(layers);
  for (std::size_t l = 0; l < layers; ++l) {
    cache.keys_[l].resize(capacity * width);
    cache.values_[l].resize(capacity * width);
    const float* qkv = acts_[l].qkv.data();  // [n, row]: q | k | v, k after RoPE
    for (std::size_t t = 0; t < n; ++t) {
      const float* k = qkv + t * row + q_width;
      std::copy(k, k + width, cache.keys_[l].data() + t * width);
      std::copy(k + width, k + 2 * width, cache.values_[l].data() + t * width);
    }
  }
  if (config_.positional == PositionalKind::Sinusoidal) {  // row t does not depend on the rows
    cache.sinusoidal_.resize(capacity * config_.d_model);
    sinusoidal_encoding(MatView(cache.sinusoidal_.data(), capacity, config_.d_model));
  }
  ModelOutput out;
  out.logits = std::span<const float>(logits_.data(), config_.vocab);
  for (const auto& layer : acts_) {
    out.attention.emplace_back(layer.att.data(), shape_.heads * n * n);
  }
  return out;
}

CachedStep Model::decode(std::int32_t id, KvCache& cache) {
  if (cache.model_ != this) {
    throw Error("this KV cache was not filled by this model: run prefill on the prompt first");
  }
  if (cache.length_ >= cache.capacity_) {
    throw Error("the KV cache is full: it has room for " + std::to_string(cache.capacity_) +
                " positions");
  }
  if (id < 0 || std::size_t(id) >= config_.vocab) {
    throw Error("token id " + std::to_string(id) +
                " is out of range: the vocabulary has ids 0 to " +
                std::to_string(config_.vocab - 1));
  }
  pack_weights();
  const std::size_t t = cache.length_, len = t + 1;  // the new position; keys 0 … t
  const std::size_t d = config_.d_model, V = config_.vocab, W = mlp_width_;
  const std::size_t row = shape_.row(), q_width = shape_.q_width(), width = shape_.kv_width();
  const std::size_t dk = shape_.head_dim, group = shape_.heads / shape_.kv_heads;
  const bool ln = config_.layer_norm, swiglu = config_.mlp_kind == MlpKind::SwiGlu;
  const std::size_t fc_width = swiglu ? 2 * W : W;
  const std::size_t pack = kLinearRowPackValues;
  LinearScratch& scratch = cache.linear_scratch_;
  AttentionScratch& attention = cache.attention_scratch_;
  cache.x_.resize(d);
  cache.h_.resize(d);
  cache.qkv_.resize(row);
  cache.ctx_.resize(q_width);
  cache.mid_.resize(d);
  cache.next_.resize(d);
  cache.logits_.resize(V);
  if (config_.mlp) {
    cache.fc_.resize(fc_width);
    cache.act_.resize(W);
  }

  // x = embed[id] + pos[t] (learned or sinusoidal), as input_embedding_forward adds row t.
  const float* pos = nullptr;
  if (config_.positional == PositionalKind::Learned) {
    pos = p(pos_);
    if (pos) pos += t * d;
  } else if (config_.positional == PositionalKind::Sinusoidal) {
    pos = cache.sinusoidal_.data() + t * d;
  }
  input_embedding_forward(&id, embed_weights_, pos, cache.x_.data(), 1, 1, d);

  const float scale = 1.0f / std::sqrt(float(dk));
  const std::size_t first = shape_.first_key(t), count = len - first;
  for (std::size_t l = 0; l < config_.layers; ++l) {
    const Layer& w = layers_[l];
    const float* x = cache.x_.data();
    const float* h = x;
    if (ln) {
      norm_forward(x, w.ln1_w, w.ln1_b, cache.h_.data(), cache.mean_, cache.rstd_, 1);
      h = cache.h_.data();
    }
    float* qkv = cache.qkv_.data();
    linear(l, kIn, w.in, h, p(w.in_b), qkv, 1, d, row, scratch, pack);
    if (config_.positional == PositionalKind::Rope) {
      rope_forward(qkv, 1, 1, shape_, config_.rope, t);
    }
    float* keys = cache.keys_[l].data();
    float* values = cache.values_[l].data();
    std::copy(qkv + q_width, qkv + q_width + width, keys + t * width);
    std::copy(qkv + q_width + width, qkv + q_width + 2 * width, values + t * width);

    // The new query of every head over keys first … t: each K/V head's keys packed once for its
    // group of query heads (whose q columns are contiguous), then causal_attention_forward's
    // softmax of row t, then A·V.
    cache.attention_[l].resize(shape_.heads * len);
    float* att = cache.attention_[l].data();  // [heads, len]
    float* ctx = cache.ctx_.data();
    for (std::size_t g = 0; g < shape_.kv_heads; ++g) {
      const std::size_t head0 = g * group;
      pack_transposed(ConstMatView(keys + first * width + g * dk, count, dk, width),
                      attention.packed_keys);  // Kᵀ [d_k, count]
      matmul_packed(ConstMatView(qkv + shape_.q_offset(head0), group, dk, dk),
                    attention.packed_keys, MatView(att + head0 * len + first, group, count, len));
      for (std::size_t head = head0; head < head0 + group; ++head) {
        causal_softmax_row(att + head * len, first, t, scale);
      }
      pack_matrix(ConstMatView(values + first * width + g * dk, count, dk, width),
                  attention.packed_rows);  // V [count, d_k]
      matmul_packed(ConstMatView(att + head0 * len + first, group, count, len),
                    attention.packed_rows, MatView(ctx + head0 * dk, group, dk, dk));
    }
    ablate_heads(l, ctx, 1, cache.head_scales_, std::nullopt);
    float* mid = cache.mid_.data();
    linear(l, kOut, w.out, ctx, p(w.out_b), mid, 1, q_width, d, scratch, pack);
    vec::add(x, mid, d);
    if (!config_.mlp) {
      std::swap(cache.x_, cache.mid_);
      continue;
    }
    const float* h2 = mid;
    if (ln) {
      norm_forward(mid, w.ln2_w, w.ln2_b, cache.h_.data(), cache.mean_, cache.rstd_, 1);
      h2 = cache.h_.data();
    }
    linear(l, kFc, w.fc, h2, p(w.fc_b), cache.fc_.data(), 1, d, fc_width, scratch, pack);
    if (swiglu) {
      swiglu_forward(cache.fc_.data(), cache.act_.data(), 1, W);
    } else {
      gelu_forward(cache.fc_.data(), cache.act_.data(), W, config_.gelu);
    }
    float* next = cache.next_.data();
    linear(l, kProj, w.proj, cache.act_.data(), p(w.proj_b), next, 1, W, d, scratch, pack);
    vec::add(mid, next, d);
    std::swap(cache.x_, cache.next_);
  }

  const float* last = cache.x_.data();
  if (ln) {
    norm_forward(last, lnf_w_, lnf_b_, cache.h_.data(), cache.mean_, cache.rstd_, 1);
    last = cache.h_.data();
  }
  linear(config_.layers, kIn, unembed_weights_, last, nullptr, cache.logits_.data(), 1, d, V,
         scratch, pack);
  cache.length_ = len;

  CachedStep out;
  out.logits = std::span<const float>(cache.logits_.data(), V);
  for (const auto& layer : cache.attention_) {
    out.attention.emplace_back(layer.data(), shape_.heads * len);
  }
  return out;
}

}  // namespace attn
