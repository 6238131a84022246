// One decoder block over a span of rows, see block.hpp.
#include "attention/model/block.hpp"

#include <algorithm>

#include "attention/error.hpp"
#include "attention/ops/geglu.hpp"
#include "attention/ops/gelu.hpp"
#include "attention/ops/layernorm.hpp"
#include "attention/ops/rmsnorm.hpp"
#include "attention/ops/rope.hpp"
#include "attention/ops/swiglu.hpp"
#include "attention/ops/vec.hpp"

namespace attn {

void BlockLinear::forward(const float* x, float* y, std::size_t m, LinearScratch& scratch,
                          std::size_t pack_values) const {
  if (packed != nullptr && !packed->empty()) {
    packed->forward(x, bias, y, m);
  } else {
    linear_forward(x, weight, bias, y, m, in, out, scratch, pack_values);
  }
}

void norm_forward(const ModelConfig& config, const float* x, const float* weight, const float* bias,
                  float* out, AlignedVector<float>& mean, AlignedVector<float>& rstd,
                  std::size_t rows) {
  const std::size_t d = config.d_model;
  switch (config.norm) {
    case NormKind::None:
      std::copy(x, x + rows * d, out);
      return;
    case NormKind::RmsNorm:
      rmsnorm_forward(x, weight, out, rows, d, float(config.norm_eps));
      return;
    case NormKind::GemmaRmsNorm:
      rmsnorm_forward(x, weight, out, rows, d, float(config.norm_eps), RmsNormWeight::OnePlus);
      return;
    case NormKind::LayerNorm:
      mean.resize(rows);
      rstd.resize(rows);
      layernorm_forward(x, weight, bias, out, mean.data(), rstd.data(), rows, d);
      return;
  }
}

void qk_norm_forward(const ModelConfig& config, std::size_t layer, const float* q_weight,
                     const float* k_weight, float* qkv, std::size_t M) {
  const QkNorm kind = config.blocks[layer].qk_norm;
  if (kind == QkNorm::None) return;
  const AttentionShape shape = attention_shape(config, layer);
  const RmsNormWeight form =
      config.norm == NormKind::GemmaRmsNorm ? RmsNormWeight::OnePlus : RmsNormWeight::Plain;
  const float eps = float(config.norm_eps);
  const std::size_t dk = shape.head_dim;
  for (std::size_t r = 0; r < M; ++r) {
    float* q = qkv + r * shape.row();  // [heads·head_dim], then the keys [kv_heads·head_dim]
    float* k = q + shape.q_width();
    if (kind == QkNorm::PerHead) {  // each head's head_dim values on their own
      rmsnorm_forward(q, q_weight, q, shape.heads, dk, eps, form);
      rmsnorm_forward(k, k_weight, k, shape.kv_heads, dk, eps, form);
    } else {  // the whole projection, before the head split
      rmsnorm_forward(q, q_weight, q, 1, shape.q_width(), eps, form);
      rmsnorm_forward(k, k_weight, k, 1, shape.kv_width(), eps, form);
    }
  }
}

void ablate_heads(const AttentionShape& shape, const BlockAblation& ablation, float* ctx,
                  std::size_t rows) {
  const std::size_t d_k = shape.head_dim, width = shape.q_width();
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
  for (std::size_t h = 0; h < ablation.scales.size(); ++h) apply(h, ablation.scales[h]);
  // The one-off head (head_ablation's): on top of the standing ones.
  if (ablation.extra_head) apply(*ablation.extra_head, ablation.extra_scale);
}

namespace {

// The block's attention sublayer's core: q|k|v rows → q/k norms → RoPE → (the caches appended) →
// attention → ablation, into a.ctx.
void attend(const ModelConfig& config, std::size_t layer, const AttentionShape& shape,
            const BlockWeights& w, const BlockRun& run, BlockActivations& a,
            AttentionScratch& scratch) {
  const BlockConfig& block = config.blocks[layer];
  const std::size_t row = shape.row(), q_width = shape.q_width(), kv_width = shape.kv_width();
  const std::size_t M = run.row_count();
  const bool rope = config.positional == PositionalKind::Rope;
  qk_norm_forward(config, layer, w.q_norm_w, w.k_norm_w, a.qkv.data(), M);
  a.ctx.resize(M * q_width);
  if (run.cache == nullptr && run.sequences.empty()) {  // each sequence over its own rows
    if (rope) rope_forward(a.qkv.data(), run.batch, run.rows, shape, block.rope, 0);
    a.att.resize(run.batch * shape.heads * run.rows * run.rows);
    causal_attention_forward(a.qkv.data(), a.att.data(), a.ctx.data(), run.batch, run.rows, shape,
                             scratch);
  } else {  // each sequence's rows join its cache's keys and values, and attend over them all
    CachedSequence one;
    std::span<CachedSequence> sequences = run.sequences;
    if (sequences.empty()) {
      one = {*run.cache, run.rows};
      sequences = {&one, 1};
    }
    std::size_t att_values = 0;
    for (const CachedSequence& s : sequences) {
      att_values += shape.heads * (run.last_rows_only ? 1 : s.rows) * (s.cache.length + s.rows);
    }
    a.att.resize(att_values);
    std::size_t first_row = 0, att_offset = 0, ctx_row = 0;
    for (const CachedSequence& s : sequences) {
      float* qkv = a.qkv.data() + first_row * row;
      const std::size_t position = s.cache.length;
      if (rope) rope_forward(qkv, 1, s.rows, shape, block.rope, position);
      for (std::size_t r = 0; r < s.rows; ++r) {
        const float* source = qkv + r * row + q_width;
        std::copy(source, source + kv_width, s.cache.keys + (position + r) * kv_width);
        std::copy(source + kv_width, source + 2 * kv_width,
                  s.cache.values + (position + r) * kv_width);
      }
      // Every row's queries, or the last row's alone (its keys and values are all in the cache).
      const std::size_t skipped = run.last_rows_only ? s.rows - 1 : 0, rows = s.rows - skipped;
      causal_attention_rows(qkv + skipped * row, row, s.cache.keys, s.cache.values, kv_width,
                            position + skipped, rows, shape, a.att.data() + att_offset,
                            a.ctx.data() + ctx_row * q_width, q_width, scratch);
      first_row += s.rows;
      ctx_row += rows;
      att_offset += shape.heads * rows * (position + s.rows);
    }
  }
  const std::size_t ctx_rows = run.last_rows_only ? run.sequences.size() : M;
  ablate_heads(shape, run.ablation, a.ctx.data(), ctx_rows);
  if (run.hooks != nullptr) run.hooks->z(layer, a.ctx.data(), ctx_rows);
}

}  // namespace

std::size_t BlockRun::row_count() const {
  if (sequences.empty()) return batch * rows;
  std::size_t M = 0;
  for (const CachedSequence& s : sequences) M += s.rows;
  return M;
}

void block_forward(const ModelConfig& config, std::size_t layer, const BlockWeights& w,
                   const float* x, float* out, const BlockRun& run, BlockActivations& a,
                   LinearScratch& linear, AttentionScratch& attention) {
  if (run.cache != nullptr && run.batch != 1) {
    throw Error("a KV cache holds one sequence: batch must be 1");
  }
  if (run.last_rows_only && run.sequences.empty()) {
    throw Error("only a run over several sequences computes their last rows alone");
  }
  const BlockConfig& block = config.blocks[layer];
  const AttentionShape shape = attention_shape(config, layer);
  const std::size_t d = config.d_model, W = mlp_width(config);
  std::size_t M = run.row_count();
  const bool pre = has_pre_norm(config, layer), post = has_post_norm(config, layer);
  const std::size_t pack = run.pack_values;

  // attn = out_proj(attention(in_proj(ln1(x)))), ln1_post(…) after it; mid = x + attn (a
  // parallel residual keeps attn alone in mid)
  const float* h = x;
  if (pre) {
    a.ln1.resize(M * d);
    norm_forward(config, x, w.ln1_w, w.ln1_b, a.ln1.data(), a.ln1_mean, a.ln1_rstd, M);
    h = a.ln1.data();
  }
  a.qkv.resize(M * shape.row());
  w.qkv.forward(h, a.qkv.data(), M, linear, pack);
  attend(config, layer, shape, w, run, a, attention);
  if (run.last_rows_only) {  // from here on each sequence's last row alone, x's gathered
    a.last_rows.resize(run.sequences.size() * d);
    std::size_t row = 0;
    for (std::size_t i = 0; i < run.sequences.size(); ++i) {
      row += run.sequences[i].rows;
      std::copy_n(x + (row - 1) * d, d, a.last_rows.data() + i * d);
    }
    x = a.last_rows.data();
    M = run.sequences.size();
  }
  a.mid.resize(M * d);
  if (post) {
    a.sublayer.resize(M * d);
    w.out.forward(a.ctx.data(), a.sublayer.data(), M, linear, pack);
    norm_forward(config, a.sublayer.data(), w.ln1_post_w, w.ln1_post_b, a.mid.data(), a.post_mean,
                 a.post_rstd, M);
  } else {
    w.out.forward(a.ctx.data(), a.mid.data(), M, linear, pack);
  }
  if (run.hooks != nullptr) run.hooks->attn_out(layer, a.mid.data(), M);
  if (!block.parallel_residual) vec::add(x, a.mid.data(), M * d);

  // out = mid + ln2_post(proj(act(fc(ln2(mid))))), or mid without an MLP; with a parallel
  // residual out = (mlp(ln2(x)) + attn) + x, in transformers' order
  if (block.mlp == MlpKind::None) {
    std::copy(a.mid.begin(), a.mid.begin() + std::ptrdiff_t(M * d), out);
    return;
  }
  const float* mlp_input = block.parallel_residual ? x : a.mid.data();
  const float* h2 = mlp_input;
  if (pre) {
    a.ln2.resize(M * d);
    norm_forward(config, mlp_input, w.ln2_w, w.ln2_b, a.ln2.data(), a.ln2_mean, a.ln2_rstd, M);
    h2 = a.ln2.data();
  }
  a.fc.resize(M * fc_rows(config, layer));
  a.act.resize(M * W);
  w.fc.forward(h2, a.fc.data(), M, linear, pack);
  if (block.mlp == MlpKind::Plain) {
    gelu_forward(a.fc.data(), a.act.data(), M * W, gelu_kind(block.activation));
  } else if (block.activation == Activation::Silu) {
    swiglu_forward(a.fc.data(), a.act.data(), M, W);
  } else {
    geglu_forward(a.fc.data(), a.act.data(), M, W, gelu_kind(block.activation));
  }
  if (post) {
    a.sublayer.resize(M * d);
    w.proj.forward(a.act.data(), a.sublayer.data(), M, linear, pack);
    norm_forward(config, a.sublayer.data(), w.ln2_post_w, w.ln2_post_b, out, a.post_mean,
                 a.post_rstd, M);
  } else {
    w.proj.forward(a.act.data(), out, M, linear, pack);
  }
  if (run.hooks != nullptr) run.hooks->mlp_out(layer, out, M);
  vec::add(a.mid.data(), out, M * d);
  if (block.parallel_residual) vec::add(x, out, M * d);
}

}  // namespace attn
