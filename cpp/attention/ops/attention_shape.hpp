// The packed q | k | v rows of one attention block: how many query heads, how many key/value heads
// they share (grouped-query attention), each head's width, a sliding window, if any, and how the
// scores are scaled (and soft-capped) before the softmax.
#pragma once

#include <cmath>
#include <cstddef>

namespace attn {

// One row of qkv [M, (heads + 2·kv_heads)·head_dim]: the query heads, then the key heads, then
// the value heads, head_dim columns each. Query head h reads key/value head h / (heads /
// kv_heads) (kv_heads == heads: multi-head attention; 1: multi-query). window > 0: query i
// sees keys i − window < j ≤ i (Mistral's sliding window); 0: every j ≤ i.
struct AttentionShape {
  std::size_t heads = 1;
  std::size_t kv_heads = 1;
  std::size_t head_dim = 1;
  std::size_t window = 0;
  double scale = 0.0;  // the scores' factor; 0: 1/√head_dim (Gemma: query_pre_attn_scalar^−½)
  double softcap = 0.0;  // > 0: scores → softcap·tanh(scores/softcap) before the mask (Gemma 2)

  // Multi-head attention over d_model columns (the small models' layout, qkv [M, 3·d]).
  static AttentionShape multi_head(std::size_t d_model, std::size_t heads) {
    return {heads, heads, d_model / heads, 0, 0.0, 0.0};
  }

  // The scores' factor in double (1/√head_dim unless a scale is given).
  double score_scale() const { return scale != 0.0 ? scale : 1.0 / std::sqrt(double(head_dim)); }

  std::size_t q_width() const { return heads * head_dim; }      // the queries' and ctx's columns
  std::size_t kv_width() const { return kv_heads * head_dim; }  // the keys' (and values') columns
  std::size_t row() const { return q_width() + 2 * kv_width(); }
  std::size_t kv_head(std::size_t h) const { return h / (heads / kv_heads); }
  // Column offsets in a qkv row of query head h's q, k and v.
  std::size_t q_offset(std::size_t h) const { return h * head_dim; }
  std::size_t k_offset(std::size_t h) const { return q_width() + kv_head(h) * head_dim; }
  std::size_t v_offset(std::size_t h) const {
    return q_width() + kv_width() + kv_head(h) * head_dim;
  }
  // The first key query i sees.
  std::size_t first_key(std::size_t i) const {
    return window != 0 && i + 1 > window ? i + 1 - window : 0;
  }
};

}  // namespace attn
