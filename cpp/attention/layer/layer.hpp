// AttentionLayer: multi-head (self- or cross-) attention with PyTorch nn.MultiheadAttention
// weights (or a Llama-family block's: grouped-query attention, rotate_half RoPE, q/k/v biases
// without an output bias), seeded initialisation, positional encodings, masks, and a full step
// trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "attention/layer/limits.hpp"
#include "attention/layer/options.hpp"
#include "attention/layer/trace.hpp"
#include "attention/layer/weights.hpp"
#include "attention/ops/flash.hpp"
#include "attention/ops/masks.hpp"
#include "attention/ops/matmul.hpp"
#include "attention/ops/positional.hpp"
#include "attention/ops/sdpa.hpp"
#include "attention/tensor.hpp"

namespace attn {

// Every head's attention weights max-pooled by `step` (see ops/max_pool.hpp).
struct WeightsPreview {
  std::size_t step = 0;       // queries and keys per pooled cell (ceil(max(n, kv_n) / side))
  std::size_t rows = 0;       // ceil(n / step)
  std::size_t cols = 0;       // ceil(kv_n / step)
  std::vector<float> values;  // [heads, rows, cols]
};

struct ForwardResult {
  Matrix output;                 // [n, d_model] (or [n, inner] without out_proj)
  std::vector<float> attention;  // [heads, n, kv_n] softmax weights, if requested
  Trace trace;                   // every step, if requested
  WeightsPreview preview;        // if requested (preview_side > 0)
  ForwardOptions options;        // the forward's options (kv cleared: it is the caller's)
};

class AttentionLayer {
 public:
  // Validates the config (heads dividing d_model, kv_heads dividing heads, sizes within bounds,
  // the RoPE spec: limits.hpp) and initialises the weights from `seed` (seeded_weights in
  // weights.hpp; q/k norms, when the config has them, start as the identity).
  explicit AttentionLayer(const LayerConfig& config);
  // A layer over weights it does not own (a block of a Model's parameter buffer): nothing is
  // copied but the kernels' packed form. The weights must outlive the layer and stay unchanged
  // while it is used; they are validated as set_weights does. set_weights, load_safetensors
  // replace them with weights of the layer's own.
  AttentionLayer(const LayerConfig& config, const LayerWeightsView& borrowed);

  const LayerConfig& config() const { return config_; }
  std::size_t head_dim() const { return head_dim_; }
  std::size_t inner_dim() const { return config_.heads * head_dim_; }  // the queries' width
  // Key/value heads (config.kv_heads, or heads for 0) and their width kv_heads · d_k.
  std::size_t kv_heads() const { return kv_heads_; }
  std::size_t kv_inner_dim() const { return kv_heads_ * head_dim_; }
  // Query heads per key/value head, and the key/value head query head h reads.
  std::size_t group_size() const { return config_.heads / kv_heads_; }
  std::size_t kv_head_of(std::size_t h) const { return h / group_size(); }
  std::size_t output_dim() const { return config_.out_proj ? config_.d_model : inner_dim(); }
  WeightShape weight_shape() const;
  // ALiBi's slope per head (empty unless positional is ALiBi).
  std::span<const float> alibi_slopes() const { return alibi_slopes_; }

  // Validates every size (naming the tensor and the expected shape) and that all values are
  // finite; on error the previous weights stay.
  void set_weights(LayerWeights weights);
  // The layer's own weights (empty for a layer over borrowed weights: read weight_view()).
  const LayerWeights& weights() const { return weights_; }
  // The weights the forward uses: its own, or the borrowed ones.
  LayerWeightsView weight_view() const { return borrowed_ ? *borrowed_ : view_of(weights_); }

  // Loads PyTorch state_dict tensors by name: in_proj_weight, out_proj.weight and, with
  // bias, in_proj_bias, with an output bias out_proj.bias, with q/k norms q_norm.weight and
  // k_norm.weight (F32). Missing, extra or misshapen tensors throw.
  // (Thin wrappers over weights_file.hpp.)
  void load_safetensors(std::span<const std::uint8_t> bytes);
  std::vector<std::uint8_t> save_safetensors() const;

  // x: [n, d_model] token embeddings. With sinusoidal or learned encodings the table is added
  // to x (and to kv, each with positions from 0). The result is owned by the layer and
  // stays valid until the next forward().
  const ForwardResult& forward(std::span<const float> x, const ForwardOptions& options);

  // The result of the last successful forward(); its trace is empty unless that forward ran
  // with want_trace. Read by explain_cell (explain.hpp) and step_text (step_text.hpp).
  const ForwardResult& last_result() const { return result_; }

 private:
  void validate_forward(std::span<const float> x, const ForwardOptions& options) const;
  // Validates the weights, takes their magnitudes and packs the copies the kernels multiply by.
  void use_weights(const LayerWeightsView& weights);
  ConstMatView add_positional(std::span<const float> x, std::size_t rows, Matrix& with_pe,
                              StepKind kind);
  // The forward's pieces: Q, K, V (RoPE applied); every head's attention into concat_; the
  // output projection.
  struct Projections {
    MatView q, k, v;  // [n, inner], [kv_n, kv_inner], [kv_n, kv_inner]
  };
  Projections project(ConstMatView input, ConstMatView source, bool cross);
  void attend(const Projections& p, const ForwardOptions& options, std::size_t kv_n);
  void project_output(std::size_t n);
  void record(StepKind kind, ConstMatView data, int head = -1);
  // One column block per traced head: query heads, or key/value heads for a per_kv_head kind.
  void record_heads(StepKind kind, ConstMatView all);

  LayerConfig config_;
  std::size_t head_dim_ = 0;
  std::size_t kv_heads_ = 0;
  LayerWeights weights_;
  std::optional<LayerWeightsView> borrowed_;  // set: the forward reads these, not weights_
  WeightMagnitudes magnitudes_;  // the float32 range check of forward() (float_range.hpp)
  PackedMatrix in_q_packed_;     // [d_model, inner] = W_qᵀ, packed
  PackedMatrix in_kv_packed_;    // [d_model, 2·kv_inner] = [W_k; W_v]ᵀ, packed
  PackedMatrix out_packed_;      // [inner, d_model] = out_proj_weightᵀ, packed
  std::vector<float> alibi_slopes_;

  // Workspace, reused across calls (grows to the largest size seen, never shrinks).
  Matrix input_, source_, positional_;
  // [n, inner] and [kv_n, 2·kv_inner] (or [n, inner + 2·kv_inner] for self)
  Matrix q_proj_, kv_proj_;
  Matrix concat_;           // [n, inner]
  Matrix scratch_weights_;  // [n, kv_n] when traced without keeping the weights
  // A scratch per thread's part of the heads (at its first head's index; the heads run on the
  // thread pool, each head on one thread, each part reusing one scratch for its heads):
  std::vector<SdpaWorkspace> sdpa_;    // the materialising path's (weights or trace requested)
  std::vector<FlashWorkspace> flash_;  // the output-only path's
  ForwardResult result_;
  // The last trace's step buffers, one slot per (kind, head), reused by the next trace so that
  // repeated traced forwards do not reallocate them.
  std::vector<Step> spare_steps_;
  std::size_t spare_slot(StepKind kind, int head) const {
    return static_cast<std::size_t>(kind) * (config_.heads + 1) + std::size_t(head + 1);
  }
  bool tracing_ = false;
  int trace_head_ = -1;  // the head whose per-head steps are recorded, or -1 for all
  bool traces(std::size_t h) const {
    return tracing_ && (trace_head_ < 0 || std::size_t(trace_head_) == h);
  }
  // Key/value head g is traced with every head, or with the traced head's group.
  bool traces_kv(std::size_t g) const {
    return tracing_ && (trace_head_ < 0 || kv_head_of(std::size_t(trace_head_)) == g);
  }
};

}  // namespace attn
