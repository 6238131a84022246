// One decoder block over a span of rows, the one place a block is computed: norm → q|k|v → q/k
// norms → RoPE → causal attention over the sequence's keys and values (this call's own rows, or a
// KV cache the rows are appended to; scaled, soft-capped, windowed) → heads ablated → out → norm
// → residual → norm → MLP → norm → residual (or the attention and the MLP side by side: a parallel
// residual), as the layer's BlockConfig selects. The full forward, prefill and each cached
// decoding step all run it, so a cached step's row is the full forward's row by construction.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

#include "attention/model/model_config.hpp"
#include "attention/ops/causal_attention.hpp"
#include "attention/ops/linear.hpp"
#include "attention/tensor.hpp"

namespace attn {

// One linear layer as a model holds it: the weight as stored, its bias, and its packed copy when
// the model has one.
struct BlockLinear {
  StoredWeights weight;
  const float* bias = nullptr;           // [out] or nullptr
  const PackedLinear* packed = nullptr;  // nullptr (or empty): packed on each call
  std::size_t in = 0, out = 0;

  // y [m, out] = x [m, in] · Wᵀ + b: from the packed copy, or packing pack_values of Wᵀ at a time
  // (the same values either way).
  void forward(const float* x, float* y, std::size_t m, LinearScratch& scratch,
               std::size_t pack_values) const;
};

// A block's weights: views into the model's buffers (nullptr where the config has none). ln1 and
// ln2 normalise the attention's and the MLP's input, ln1_post and ln2_post their output; q_norm
// and k_norm the queries and keys before RoPE.
struct BlockWeights {
  const float *ln1_w = nullptr, *ln1_b = nullptr, *ln2_w = nullptr, *ln2_b = nullptr;
  const float *ln1_post_w = nullptr, *ln1_post_b = nullptr;
  const float *ln2_post_w = nullptr, *ln2_post_b = nullptr;
  const float *q_norm_w = nullptr, *k_norm_w = nullptr;
  BlockLinear qkv, out, fc, proj;
};

// What one run of a block keeps: what the backward, the traces and the analyses read.
// M = batch·rows; keys = position + rows (the keys the last row sees, counted from 0).
struct BlockActivations {
  AlignedVector<float> ln1, ln1_mean, ln1_rstd;  // [M, d], [M], [M]: the attention's input
  AlignedVector<float> qkv;  // [M, shape.row()] (q, k after their norms and RoPE)
  AlignedVector<float> att;  // [batch, heads, rows, keys], causal
  AlignedVector<float> ctx;  // [M, heads·head_dim]: heads' A·V (ablated)
  // [M, d]: x + attn(…); with a parallel residual, attn(…) alone (the block's output adds both)
  AlignedVector<float> mid;
  AlignedVector<float> ln2, ln2_mean, ln2_rstd;  // [M, d], [M], [M]
  AlignedVector<float> fc, act;                  // [M, fc_rows], [M, mlp_width]
  // [M, d]: a sublayer's output before its norm (norms after a sublayer), and the norm's
  // statistics (LayerNorm only)
  AlignedVector<float> sublayer, post_mean, post_rstd;
  AlignedVector<float> last_rows;  // [sequences, d]: x's last rows (BlockRun::last_rows_only)
};

// One sequence's keys and values of one layer, after RoPE: rows 0 … length − 1 held, room for
// more. The block writes its rows' keys and values at `length` … and attends over all of them.
struct KvLayerView {
  float* keys = nullptr;    // [capacity, kv_heads·head_dim]
  float* values = nullptr;  // [capacity, kv_heads·head_dim]
  std::size_t length = 0;   // positions held before this run
};

// One sequence of a run over several sequences, each through its own keys and values (activation
// patching's reruns, activation_patching.hpp): `rows` rows after the `cache.length` positions whose
// keys and values its cache holds.
struct CachedSequence {
  KvLayerView cache;
  std::size_t rows = 0;
};

// What a run lets its caller read or replace as the blocks compute it (TransformerLens's hook
// points): the residual stream entering a block (resid_pre), the heads' outputs before the output
// projection (z: A·V after any ablation, [M, heads·head_dim]), and the attention's and the MLP's
// outputs as the residual stream adds them (attn_out, mlp_out: [M, d], after a norm after the
// sublayer). Each is called with the layer and its M rows, before the run goes on with them.
class RunHooks {
 public:
  virtual ~RunHooks() = default;
  virtual void resid_pre(std::size_t /*layer*/, float* /*x*/, std::size_t /*M*/) const {}
  virtual void z(std::size_t /*layer*/, float* /*ctx*/, std::size_t /*M*/) const {}
  virtual void attn_out(std::size_t /*layer*/, float* /*out*/, std::size_t /*M*/) const {}
  virtual void mlp_out(std::size_t /*layer*/, float* /*out*/, std::size_t /*M*/) const {}
};

// Heads whose output a run leaves out or scales (model.hpp's HeadAblation): per head of the layer
// [heads] (1: kept; empty: none), and one more head on top (head_ablation's one-off).
struct BlockAblation {
  std::span<const float> scales;
  std::optional<std::size_t> extra_head;
  float extra_scale = 1.0f;
};

// How a block runs: `batch` sequences of `rows` rows each, the first at position `position`; with
// a cache (batch 1), its keys and values come first and these rows' are appended; with
// `sequences`, each of them through its own cache (batch, rows and cache unused), their rows one
// after another.
struct BlockRun {
  std::size_t batch = 1, rows = 0;
  KvLayerView* cache = nullptr;  // nullptr: each sequence attends over its own rows (position 0)
  std::span<CachedSequence> sequences;
  BlockAblation ablation;
  std::size_t pack_values = kLinearPackValues;  // kLinearRowPackValues for one row
  const RunHooks* hooks = nullptr;
  // With sequences: after their keys and values, only each sequence's last row is computed (the
  // attention's query, out, MLP: what a run that reads only the last position needs from its last
  // block); `out` is then [sequences, d] and the hooks after z see those rows alone.
  bool last_rows_only = false;

  // M: the rows this run computes.
  std::size_t row_count() const;
};

// out [M, d] = block(x [M, d]) for layer `layer` of `config`, keeping its activations in `a`.
// `out` may not alias `x`.
void block_forward(const ModelConfig& config, std::size_t layer, const BlockWeights& w,
                   const float* x, float* out, const BlockRun& run, BlockActivations& a,
                   LinearScratch& linear, AttentionScratch& attention);

// out [rows, d] = the config's norm of x [rows, d] with weight and bias (LayerNorm keeps its
// statistics in mean and rstd; RMSNorm needs none); NormKind::None copies x.
void norm_forward(const ModelConfig& config, const float* x, const float* weight, const float* bias,
                  float* out, AlignedVector<float>& mean, AlignedVector<float>& rstd,
                  std::size_t rows);

// The q/k norms of layer `layer` in place on qkv [M, shape.row()]: each row's query heads (and key
// heads) normalised per head or as a whole (BlockConfig::qk_norm), by the model's RMSNorm kind.
void qk_norm_forward(const ModelConfig& config, std::size_t layer, const float* q_weight,
                     const float* k_weight, float* qkv, std::size_t M);

// Scales (zeroes) the ablated heads' columns of ctx [rows, heads·head_dim].
void ablate_heads(const AttentionShape& shape, const BlockAblation& ablation, float* ctx,
                  std::size_t rows);

}  // namespace attn
