// AttentionLayer: multi-head (self- or cross-) attention with PyTorch nn.MultiheadAttention
// weights, seeded initialisation, positional encodings, masks, and a full step trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "attention/ops/flash.hpp"
#include "attention/ops/masks.hpp"
#include "attention/ops/matmul.hpp"
#include "attention/ops/positional.hpp"
#include "attention/ops/sdpa.hpp"
#include "attention/tensor.hpp"
#include "attention/trace.hpp"

namespace attn {

// Bounds that keep one call inside a browser tab's memory; exceeding one throws attn::Error.
inline constexpr std::size_t kMaxModelDim = 4096;
inline constexpr std::size_t kMaxHeads = 256;
inline constexpr std::size_t kMaxSequence = 65536;  // n and kv_n
// n·kv_n·(heads if kept), on the paths that hold the scores: weights or a trace requested. The
// output-only path (flash_attention) holds O(n·d) and has no such limit.
inline constexpr std::size_t kMaxScoreValues = std::size_t{1} << 26;
inline constexpr std::size_t kMaxTraceValues = std::size_t{1} << 22;  // traced heads·n·kv_n

struct LayerConfig {
  std::size_t d_model = 64;
  std::size_t heads = 4;
  std::size_t head_dim = 0;  // d_k; 0 means d_model / heads (which must then divide d_model)
  bool bias = true;          // in_proj_bias and out_proj.bias
  bool out_proj = true;      // false: the output is the concatenated heads (no W_O)
  PositionalKind positional = PositionalKind::None;
  std::uint32_t seed = 42;  // seeded initialisation of weights and tables
};

// Weights in nn.MultiheadAttention layout (inner = heads · head_dim; = d_model by default):
// Q = X·W_qᵀ + b_q with W_q = in_proj_weight rows [0, inner), W_k the next inner rows, W_v
// the last.
struct LayerWeights {
  std::vector<float> in_proj_weight;   // [3·inner, d_model]
  std::vector<float> in_proj_bias;     // [3·inner], empty without bias
  std::vector<float> out_proj_weight;  // [d_model, inner], empty without out_proj
  std::vector<float> out_proj_bias;    // [d_model], empty without bias or out_proj
};

struct ForwardOptions {
  std::size_t n = 0;          // queries
  bool cross = false;         // keys and values from kv (else from x: self-attention)
  std::span<const float> kv;  // cross-attention source [kv_n, d_model]
  std::size_t kv_n = 0;       // source length (cross-attention only)
  MaskSpec mask;
  bool scale = true;         // divide scores by √d_k
  bool want_weights = true;  // fill ForwardResult::attention (else: the flash path, unless traced)
  bool want_trace = false;   // fill ForwardResult::trace
  int trace_head = -1;       // with want_trace: per-head steps of this head only (-1: every head)
  // > 0: fill ForwardResult::preview with every head's weights max-pooled to at most
  // preview_side × preview_side (for drawing long inputs small, without returning the weights).
  std::size_t preview_side = 0;
};

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
};

class AttentionLayer {
 public:
  // Validates the config (heads dividing d_model, sizes within bounds) and initialises the
  // weights from `seed`: in_proj Xavier-uniform and out_proj uniform(±1/√inner) as PyTorch
  // does, biases uniform(±1/√d_model) (PyTorch starts them at zero; nonzero shows their role).
  explicit AttentionLayer(const LayerConfig& config);

  const LayerConfig& config() const { return config_; }
  std::size_t head_dim() const { return head_dim_; }
  std::size_t inner_dim() const { return config_.heads * head_dim_; }
  std::size_t output_dim() const { return config_.out_proj ? config_.d_model : inner_dim(); }

  // Validates every size (naming the tensor and the expected shape) and that all values are
  // finite; on error the previous weights stay.
  void set_weights(LayerWeights weights);
  const LayerWeights& weights() const { return weights_; }

  // Loads PyTorch state_dict tensors by name: in_proj_weight, out_proj.weight and, with
  // bias, in_proj_bias and out_proj.bias (F32). Missing, extra or misshapen tensors throw.
  void load_safetensors(std::span<const std::uint8_t> bytes);
  std::vector<std::uint8_t> save_safetensors() const;

  // x: [n, d_model] token embeddings. With sinusoidal or learned encodings the table is added
  // to x (and to kv, each with positions from 0). The result is owned by the layer and
  // stays valid until the next forward().
  const ForwardResult& forward(std::span<const float> x, const ForwardOptions& options);

  // The result of the last successful forward(); its trace is empty unless that forward ran
  // with want_trace. Read by explain_cell (explain.hpp).
  const ForwardResult& last_result() const { return result_; }

 private:
  void validate_forward(std::span<const float> x, const ForwardOptions& options) const;
  void prepare_weights();  // the packed copies the kernels multiply by
  ConstMatView add_positional(std::span<const float> x, std::size_t rows, Matrix& with_pe,
                              const char* step_id);
  void record(std::string id, std::string title, std::string equation, ConstMatView data, int head,
              std::string rows, std::string cols);
  void record_projections(ConstMatView q_all, ConstMatView k_all, ConstMatView v_all, bool cross);
  void record_rotations(ConstMatView q_all, ConstMatView k_all);
  void record_head(std::size_t h, const SdpaSnapshots& snapshots, ConstMatView weights,
                   ConstMatView context, bool scaled);

  LayerConfig config_;
  std::size_t head_dim_ = 0;
  LayerWeights weights_;
  // Largest |value| of the W_Q, W_K, W_V blocks of in_proj_weight, of b_Q, b_K, b_V, of
  // out_proj.weight and out_proj.bias: the float32 range check of forward() (float_range.hpp).
  float weight_max_abs_[8] = {};
  PackedMatrix in_q_packed_;   // [d_model, inner] = W_qᵀ, packed
  PackedMatrix in_kv_packed_;  // [d_model, 2·inner] = [W_k; W_v]ᵀ, packed
  PackedMatrix out_packed_;    // [inner, d_model] = out_proj_weightᵀ, packed
  std::vector<float> alibi_slopes_;

  // Workspace, reused across calls (grows to the largest size seen, never shrinks).
  Matrix input_, source_, positional_;
  Matrix q_proj_, kv_proj_;  // [n, inner] and [kv_n, 2·inner] (or [n, 3·inner] for self)
  Matrix concat_;            // [n, inner]
  Matrix scratch_weights_;   // [n, kv_n] when traced without keeping the weights
  SdpaWorkspace sdpa_;       // the materialising path's scratch (weights or trace requested)
  FlashWorkspace flash_;     // the output-only path's scratch
  ForwardResult result_;
  bool tracing_ = false;
  int trace_head_ = -1;  // the head whose per-head steps are recorded, or -1 for all
  bool traces(std::size_t h) const {
    return tracing_ && (trace_head_ < 0 || std::size_t(trace_head_) == h);
  }
};

}  // namespace attn
