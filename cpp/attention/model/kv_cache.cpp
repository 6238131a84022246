// Generation's KV cache: Model::prefill (a prompt's forward, its keys and values kept) and
// Model::decode (one new position over the cache), see model.hpp. Both run every block through
// block_forward, the full forward's one block, with the cache as the keys' and values' store.
#include <algorithm>
#include <string>

#include "attention/error.hpp"
#include "attention/model/model.hpp"
#include "attention/ops/positional.hpp"

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
  const std::size_t layers = config_.layers, width = attention_shape(config_).kv_width();
  cache.model_ = this;
  cache.length_ = 0;
  cache.capacity_ = capacity;
  cache.width_ = width;
  cache.head_scales_ = head_scales_;
  cache.keys_.resize(layers);
  cache.values_.resize(layers);
  cache.blocks_.resize(layers);
  for (std::size_t l = 0; l < layers; ++l) {
    cache.keys_[l].resize(capacity * width);
    cache.values_[l].resize(capacity * width);
  }
  run_forward(ids.data(), 1, n, head_scales_, std::nullopt, false, &cache);
  cache.length_ = n;
  if (config_.positional == PositionalKind::Sinusoidal) {  // row t does not depend on the rows
    cache.sinusoidal_.resize(capacity * config_.d_model);
    sinusoidal_encoding(MatView(cache.sinusoidal_.data(), capacity, config_.d_model));
  }
  ModelOutput out;
  out.logits = std::span<const float>(logits_.data(), config_.vocab);
  for (const auto& layer : acts_) {
    out.attention.emplace_back(layer.att.data(), config_.heads * n * n);
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
  const std::size_t d = config_.d_model, V = config_.vocab;
  cache.x_.resize(d);
  cache.next_.resize(d);
  cache.logits_.resize(V);

  // x = embed[id] (scaled) + pos[t] (learned or sinusoidal), as the full forward's row t.
  const float* pos = nullptr;
  if (config_.positional == PositionalKind::Learned) {
    pos = p(pos_);
    if (pos) pos += t * d;
  } else if (config_.positional == PositionalKind::Sinusoidal) {
    pos = cache.sinusoidal_.data() + t * d;
  }
  embed_rows(&id, pos, cache.x_.data(), 1, 1);

  for (std::size_t l = 0; l < config_.layers; ++l) {
    KvLayerView view{cache.keys_[l].data(), cache.values_[l].data(), t};
    BlockRun run;
    run.rows = 1;
    run.cache = &view;
    run.ablation = block_ablation(l, cache.head_scales_, std::nullopt);
    run.pack_values = kLinearRowPackValues;
    block_forward(config_, l, block_weights(l), cache.x_.data(), cache.next_.data(), run,
                  cache.blocks_[l], cache.linear_scratch_, cache.attention_scratch_);
    std::swap(cache.x_, cache.next_);
  }
  logits_of(cache.x_.data(), 1, cache.final_, cache.mean_, cache.rstd_, cache.logits_.data(),
            cache.linear_scratch_, kLinearRowPackValues);
  cache.length_ = len;

  CachedStep out;
  out.logits = std::span<const float>(cache.logits_.data(), V);
  for (const auto& block : cache.blocks_) {
    out.attention.emplace_back(block.att.data(), config_.heads * len);
  }
  return out;
}

}  // namespace attn
