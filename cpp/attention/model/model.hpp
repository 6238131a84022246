// A small decoder-only transformer (docs/API.md, "Models, training and checkpoints"): the
// validated config, every parameter in one float buffer under PyTorch-style names, the forward
// (logits and every layer's attention), the loss and its gradients, and .safetensors files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "attention/layer/layer.hpp"
#include "attention/layer/trace.hpp"
#include "attention/ops/attention_shape.hpp"
#include "attention/ops/causal_attention.hpp"
#include "attention/ops/gelu.hpp"
#include "attention/ops/half.hpp"
#include "attention/ops/linear.hpp"
#include "attention/ops/positional.hpp"
#include "attention/ops/rope.hpp"
#include "attention/tensor.hpp"

namespace attn {

inline constexpr std::size_t kMaxModelVocab = 512;
inline constexpr std::size_t kMaxModelContext = 1024;
inline constexpr std::size_t kMaxModelDModel = 512;
inline constexpr std::size_t kMaxModelLayers = 4;
// A loaded checkpoint's own bounds (ModelConfig::checkpoint): 64 layers (GPT-2 XL has 48), d
// 8 192, Qwen2's 151 936 and Llama 3's 128 256 ids, a learned position table of 2 048 rows (GPT-2
// has 1 024; some conversions keep 2 048) and, with RoPE (no table), 131 072 positions (the
// context only bounds n; the memory a forward needs is bounded by kMaxModelAttentionValues).
inline constexpr std::size_t kMaxCheckpointVocab = 262144;
inline constexpr std::size_t kMaxCheckpointContext = 2048;
inline constexpr std::size_t kMaxCheckpointRopeContext = 131072;
inline constexpr std::size_t kMaxCheckpointDModel = 8192;
inline constexpr std::size_t kMaxCheckpointLayers = 64;
// batch·heads·n² attention weights kept per layer for the backward (256 MB of floats).
inline constexpr std::size_t kMaxModelAttentionValues = std::size_t{1} << 26;

// The norm before each block and at the end.
enum class NormKind {
  LayerNorm,  // (x − mean)·rstd ⊙ w + b, ε 1e-5 (GPT-2, the small models)
  RmsNorm,    // x · rsqrt(mean(x²) + norm_eps) ⊙ w (the Llama family)
};
// The MLP after each attention block.
enum class MlpKind {
  Gelu,    // proj(GELU(fc(h))), fc [mlp_width, d]
  SwiGlu,  // down(silu(gate(h)) ⊙ up(h)): fc [2·mlp_width, d] holds gate's rows, then up's
};

struct ModelConfig {
  std::size_t vocab = 32;    // 2 … 512 token ids
  std::size_t context = 64;  // 1 … 1024: the longest sequence (rows of pos.weight)
  std::size_t d_model = 64;  // 1 … 512, a multiple of heads
  std::size_t heads = 4;
  std::size_t layers = 2;                               // 1 … 4
  PositionalKind positional = PositionalKind::Learned;  // none | sinusoidal | learned | rope
  bool layer_norm = true;  // pre-LN in every block (ln1, ln2) and a final ln_f
  bool mlp = false;        // x = x + proj(GELU(fc(ln2(x)))) after each attention block, 4·d_model
  bool tied = false;       // logits = ln_f(x)·embed.weightᵀ (no unembed.weight)
  bool bias = true;        // false drops every linear bias (LayerNorm keeps its affine bias)
  GeluKind gelu = GeluKind::Erf;  // exact erf (torch.nn.GELU()); tanh for GPT-2 checkpoints
  std::uint32_t seed = 1;         // the initial weights
  // What the Llama family (a loaded checkpoint's config) changes; the defaults are the small
  // models' and GPT-2's.
  NormKind norm = NormKind::LayerNorm;
  double norm_eps = 1e-5;  // RMSNorm's ε (rms_norm_eps); LayerNorm's is 1e-5
  MlpKind mlp_kind = MlpKind::Gelu;
  std::size_t mlp_width = 0;  // 0: 4·d_model; SwiGLU: intermediate_size
  std::size_t kv_heads = 0;   // 0: heads; fewer: grouped-query attention (must divide heads)
  std::size_t head_dim = 0;   // 0: d_model / heads
  std::size_t window = 0;     // > 0: a sliding window (query i sees keys i − window < j ≤ i)
  RopeSpec rope;              // with positional rope: pairing, θ (rope_theta) and scaling
  // Per-linear biases where a family differs from `bias` (unset: `bias`): Qwen2 has q/k/v biases
  // but no o_proj or MLP bias.
  std::optional<bool> qkv_bias, out_bias, mlp_bias;
  // Weights read from a checkpoint (gpt2_checkpoint.hpp): the kMaxCheckpoint* bounds instead of
  // kMaxModel*, parameters start at 0 instead of being drawn, and the gradients' buffer is only
  // allocated by the first loss_and_gradients (a GPT-2 forward needs no second copy).
  bool checkpoint = false;
};

// Throws attn::Error naming the field, its bound and the value, e.g.
// "layers must be between 1 and 4, got 5".
void validate(const ModelConfig& config);

// What a validated config resolves to: the attention's q|k|v layout, the MLP's width, the biases.
AttentionShape attention_shape(const ModelConfig& config);
std::size_t mlp_width(const ModelConfig& config);
bool has_qkv_bias(const ModelConfig& config);
bool has_out_bias(const ModelConfig& config);
bool has_mlp_bias(const ModelConfig& config);

// One parameter tensor: values [offset, offset + size) of the parameter buffer, row-major.
struct ParameterInfo {
  std::string name;  // e.g. "layers.0.attn.in_proj_weight"
  std::vector<std::size_t> shape;
  std::size_t offset = 0;  // in the float buffer, or (half) which of the 2-byte buffers
  std::size_t size = 0;
  std::optional<HalfKind> half;  // kept in a checkpoint's 2-byte form (F16 or BF16)
};

// Validates the config and lays out its parameters in buffer order (Model::parameter_table);
// parameter_count is the buffer's size.
std::vector<ParameterInfo> parameter_layout(const ModelConfig& config);
std::uint64_t parameter_count(const ModelConfig& config);

// One head whose output a forward leaves out: its context (its d_k columns of the concatenated
// heads' A·V, before out_proj) is zeroed in that layer, as if the head attended to nothing; or,
// with a scale in (0, 1], multiplied by it (1 changes nothing). Its attention weights stay its own.
struct HeadAblation {
  std::size_t layer = 0;
  std::size_t head = 0;
  float scale = 0.0f;  // in [0, 1]; 0 zeroes the head (the ablation proper)

  bool operator==(const HeadAblation&) const = default;
};

class Model;

// One sequence's keys and values in every layer (after RoPE), so generation computes one new row
// per token instead of a whole forward: layer l keeps keys [capacity, kv_heads·head_dim] and values
// the same (grouped-query heads store each K/V head once), rows 0 … length−1 filled. Model::prefill
// fills it from a prompt and Model::decode appends one position at a time; it also keeps the
// buffers of one step and the heads ablated when it was filled (a later Model::ablate does not
// change a generation under way).
class KvCache {
 public:
  std::size_t length() const { return length_; }      // positions held
  std::size_t capacity() const { return capacity_; }  // positions it has room for
  // Layer l's keys and values so far: [length, kv_heads·head_dim] each.
  std::span<const float> keys(std::size_t layer) const {
    return {keys_.at(layer).data(), length_ * width_};
  }
  std::span<const float> values(std::size_t layer) const {
    return {values_.at(layer).data(), length_ * width_};
  }

 private:
  friend class Model;
  const Model* model_ = nullptr;  // the model that filled it
  std::size_t length_ = 0, capacity_ = 0, width_ = 0;
  std::vector<AlignedVector<float>> keys_, values_;  // per layer [capacity, width]
  std::vector<std::vector<float>> head_scales_;      // per layer [heads] (1: kept), or empty
  AlignedVector<float> sinusoidal_;                  // [capacity, d] (sinusoidal positions only)
  // One step's activations: x, norm, q|k|v, heads' A·V, x + attn, the MLP, logits [vocab].
  AlignedVector<float> x_, h_, qkv_, ctx_, mid_, fc_, act_, next_, logits_;
  std::vector<AlignedVector<float>> attention_;  // per layer [heads, length]: the new query's row
  AlignedVector<float> mean_, rstd_;
  LinearScratch linear_scratch_;
  AttentionScratch attention_scratch_;
};

// One position run through the cache (Model::decode): views into the cache, valid until its next
// step.
struct CachedStep {
  std::span<const float> logits;                  // [vocab]: the new position's
  std::vector<std::span<const float>> attention;  // per layer [heads, length]: its query's row
};

// The forward's results: views into the model's buffers, valid until its next call.
struct ModelOutput {
  std::span<const float> logits;  // [batch·n·vocab], or [batch·vocab]: the last positions only
  std::vector<std::span<const float>> attention;  // per layer [batch·heads·n·n], causal
};

class Model {
 public:
  // A loaded checkpoint's model: the parameters named in `kept_half` (weight matrices, each with
  // its file's 2-byte kind) stay in that form, widened as the kernels read them; the others are
  // float. Every parameter starts at 0 (the import fills them).
  Model(const ModelConfig& config, const std::vector<std::pair<std::string, HalfKind>>& kept_half);

  // Validates the config, lays out the parameters and initialises them from config.seed:
  // LayerNorm weights 1 and biases 0, every linear bias 0, every other weight N(0, 0.02²)
  // (GPT-2's scheme), out_proj and mlp.proj weights N(0, (0.02/√(2·layers))²); drawn in table
  // order from one NumpyRandomState(seed), so a seed always gives the same model.
  explicit Model(const ModelConfig& config);

  const ModelConfig& config() const { return config_; }
  // In buffer order: embed.weight, pos.weight, layers.i.{ln1, attn, ln2, mlp}…, ln_f,
  // unembed.weight — only the tensors the config has.
  const std::vector<ParameterInfo>& parameter_table() const { return table_; }
  const ParameterInfo& parameter_info(const std::string& name) const;  // throws if absent
  std::size_t parameter_count() const { return params_.size(); }

  // The float parameters (every parameter unless some are kept 2-byte).
  std::span<float> parameters() {
    packed_current_ = false;  // the caller may change them: pack again before the next forward
    return params_;
  }
  std::span<const float> parameters() const { return params_; }
  // A float parameter (a 2-byte one throws attn::Error: see parameter_values and half_parameter).
  std::span<float> parameter(const std::string& name);
  // Any parameter's values as float (a 2-byte one widened): a copy.
  std::vector<float> parameter_values(const std::string& name) const;
  // A 2-byte parameter's stored values (throws for a float one).
  std::span<std::uint16_t> half_parameter(const std::string& name);
  // The parameters' bytes in memory: 4 per float value, 2 per kept 2-byte one.
  std::uint64_t parameter_bytes() const;
  bool has_half_parameters() const { return !halves_.empty(); }
  // A weight matrix as stored (float or 2-byte), for the kernels; empty when absent.
  StoredWeights stored_weights(const std::string& name) const { return stored(name); }
  std::span<const float> gradients() const { return grads_; }  // empty before a checkpoint
  std::span<float> gradients() { return grads_; }              // model's first backward
  std::span<const float> gradient(const std::string& name) const;

  // ids [batch·n] (each < vocab), 1 <= n <= context, batch·heads·n² within
  // kMaxModelAttentionValues; the heads ablate() set are ablated, and with `ablation` that head
  // too (the attention weights reported are still the heads' own). Throws attn::Error on bad
  // input.
  // all_logits false: the logits of each sequence's last position only ([batch·vocab], equal to
  // those rows of the full logits), skipping the unembedding of every other row.
  ModelOutput forward(std::span<const std::int32_t> ids, std::size_t batch, std::size_t n,
                      std::optional<HeadAblation> ablation = std::nullopt, bool all_logits = true);

  // Ablates these heads (HeadAblation: zeroed, or scaled) in every later forward, trace,
  // loss_and_gradients (whose gradients are then the ablated model's) and prefill; {} restores
  // the model, bit for bit. Each head once, layer < layers, head < heads, scale in [0, 1]; else
  // attn::Error naming it, and the ablation in force stays.
  void ablate(std::vector<HeadAblation> heads);
  // The heads ablated now, in the order given.
  const std::vector<HeadAblation>& ablated() const { return ablated_; }

  // Generation with a KV cache. prefill runs ids [n] (one sequence, as forward checks it) through
  // the model as forward does, with the heads ablated now, and fills `cache` with every layer's
  // keys and values, room for `capacity` positions (n … context). Returns the forward's
  // attention (per layer [heads·n·n]) and the logits of the LAST position only ([vocab]: equal to
  // forward's last row); both views into the model's forward buffers, like forward's.
  ModelOutput prefill(std::span<const std::int32_t> ids, std::size_t capacity, KvCache& cache);
  // Appends token `id` at position t = cache.length() (< capacity): its embedding (with position
  // t's learned or sinusoidal row), norms, q, k, v of one row (RoPE at t), the attention of its
  // one query over the cached keys 0 … t (the sliding window's when there is one), the MLP and
  // the logits. Every value equals the full forward's row t bit for bit (the same kernels, each
  // value summed in the same order), except where a GELU's SIMD chunks straddle rows (a width
  // not a multiple of the SIMD width), where they agree to float32 rounding.
  CachedStep decode(std::int32_t id, KvCache& cache);

  // Layer `layer`'s attention input in the last forward (or loss_and_gradients): ln1(x_l), or
  // x_l without LayerNorm, [batch·n, d_model]. An AttentionLayer with that block's weights,
  // causal, positional rope or none, computes the layer's attention from it (as trace() does).
  // Throws attn::Error before any forward or for a layer out of range.
  std::span<const float> attention_input(std::size_t layer) const;

  // forward on one sequence ids [n], then every layer's attention run again, traced, by an
  // AttentionLayer over that block's weights in the parameter buffer (borrowed, not copied), on
  // ln1(x_l) (x_l without LayerNorm), causal, positional rope or none (trace_head as
  // ForwardOptions'): traced_layer(l).last_result().trace holds layer l's steps in the
  // walkthrough's vocabulary, and step_text and explain_cell work on traced_layer(l) as on any
  // layer. Valid until the next trace() or load_safetensors; a change of parameters in between
  // shows in explanations, not in the recorded steps.
  void trace(std::span<const std::int32_t> ids, std::size_t n, int trace_head = -1);
  // Throws attn::Error unless batch is 1: a trace follows one sequence.
  static void check_trace_batch(std::size_t batch);
  const AttentionLayer& traced_layer(std::size_t layer) const;

  // The mean cross-entropy of the next-token logits against targets [batch·n] (< 0 ignored;
  // at least one must count), and its gradient with respect to every parameter, written to
  // gradients() (overwritten, not accumulated).
  float loss_and_gradients(std::span<const std::int32_t> ids, std::span<const std::int32_t> targets,
                           std::size_t batch, std::size_t n);

  // Replaces the parameter `name` with values (exactly its size, else attn::Error naming it).
  void set_parameter(const std::string& name, std::span<const float> values);

  // Every parameter under its name (F32) and the config as metadata.
  std::vector<std::uint8_t> save_safetensors() const;
  // Reads a file saved for the same config; a missing, extra, non-F32 or differently shaped
  // tensor throws attn::Error naming it (and the shapes), leaving the weights unchanged.
  void load_safetensors(std::span<const std::uint8_t> bytes);

 private:
  struct Layer {  // offsets of one block's float parameters (kNone when absent or kept 2-byte)
    std::size_t ln1_w, ln1_b, in_w, in_b, out_w, out_b, ln2_w, ln2_b, fc_w, fc_b, proj_w, proj_b;
    StoredWeights in, out, fc, proj;  // the weight matrices as stored (float or 2-byte)
  };
  struct LayerActivations {
    AlignedVector<float> ln1, ln1_mean, ln1_rstd;  // [M, d], [M], [M]   (M = batch·n)
    AlignedVector<float> qkv;                      // [M, shape.row()] (q, k after RoPE)
    AlignedVector<float> att;                      // [batch, heads, n, n]
    AlignedVector<float> ctx;                      // [M, heads·head_dim]: heads' A·V
    AlignedVector<float> mid;                      // [M, d]: x + attn(…)
    AlignedVector<float> ln2, ln2_mean, ln2_rstd;  // [M, d], [M], [M]
    AlignedVector<float> fc, gelu;                 // [M, W] (SwiGLU: fc [M, 2W])
  };

  // out [M, d] = norm(x) with the block's (or the final) weights; keeps the LayerNorm statistics.
  void norm_forward(const float* x, std::size_t weight, std::size_t bias, float* out,
                    AlignedVector<float>& mean, AlignedVector<float>& rstd, std::size_t rows);
  void initialise();
  void check_ids(std::span<const std::int32_t> ids, std::size_t batch, std::size_t n) const;
  // all_logits false: the logits of each sequence's last position only (logits_ [batch, vocab]).
  void run_forward(const std::int32_t* ids, std::size_t batch, std::size_t n,
                   std::optional<HeadAblation> ablation = std::nullopt, bool all_logits = true);
  void check_ablation(const HeadAblation& head) const;
  // Scales (zeroes) the ablated heads' columns of ctx [rows, heads·head_dim] in `layer`: `scales`
  // per layer [heads] (empty: none), and `extra`.
  void ablate_heads(std::size_t layer, float* ctx, std::size_t rows,
                    const std::vector<std::vector<float>>& scales,
                    std::optional<HeadAblation> extra) const;
  const float* p(std::size_t offset) const { return offset == kNone ? nullptr : &params_[offset]; }
  float* g(std::size_t offset) { return offset == kNone ? nullptr : &grads_[offset]; }

  static constexpr std::size_t kNone = std::size_t(-1);

  // The weights packed once for inference (PackedLinear): per layer in, out, fc, proj, then the
  // unembedding. Packed at the first forward after the parameters may have changed, as many as
  // fit in kPackedWeightBytes, and no more than leave the parameters and packed copies within
  // kPackedWeightsWithParameters; a weight left out is packed on every call, as before. Every
  // value is the same either way (the same kernel sums each in the same order).
  static constexpr std::uint64_t kPackedWeightBytes = std::uint64_t{1} << 30;
  static constexpr std::uint64_t kPackedWeightsWithParameters = std::uint64_t{5} << 29;
  enum Projection : std::size_t { kIn, kOut, kFc, kProj, kProjections };
  void pack_weights();
  // y [m, out] = x [m, in] · Wᵀ + b for W = layer `layer`'s projection (layer == layers: the
  // unembedding), from its packed copy when it has one.
  void linear(std::size_t layer, Projection projection, const StoredWeights& w, const float* x,
              const float* b, float* y, std::size_t m, std::size_t in, std::size_t out,
              LinearScratch& scratch, std::size_t pack_values = kLinearPackValues) const;

  void lay_out(const std::vector<std::pair<std::string, HalfKind>>& kept_half);
  StoredWeights stored(const std::string& name) const;
  // Layer l's attention weights as float for a traced layer: borrowed, or widened into
  // traced_weights_ when kept 2-byte.
  std::span<const float> traced_weights(std::size_t offset, const StoredWeights& stored,
                                        std::size_t size);

  ModelConfig config_;
  std::vector<ParameterInfo> table_;
  AlignedVector<float> params_, grads_;
  std::vector<std::vector<std::uint16_t>> halves_;  // the 2-byte parameters, one buffer each
  std::size_t embed_ = kNone, pos_ = kNone, lnf_w_ = kNone, lnf_b_ = kNone, unembed_ = kNone;
  StoredWeights embed_weights_, unembed_weights_;
  std::vector<std::vector<float>> traced_weights_;  // widened copies the traced layers borrow
  std::vector<Layer> layers_;

  // activations of the last forward (what the backward needs)
  std::size_t batch_ = 0, n_ = 0;
  AlignedVector<float> sinusoidal_;             // [n, d]
  std::vector<AlignedVector<float>> residual_;  // layers + 1 of [M, d]
  std::vector<LayerActivations> acts_;
  AlignedVector<float> lnf_, lnf_mean_, lnf_rstd_, logits_, probs_;
  AlignedVector<float> last_rows_;  // [batch, d]: each sequence's last residual row
  // backward buffers and matmul scratch
  AlignedVector<float> d_logits_, d_resid_, d_h_, d_ctx_, d_qkv_, d_fc_, d_gelu_;
  LinearScratch linear_scratch_;
  AttentionScratch attention_scratch_;
  AttentionShape shape_;                                        // attention_shape(config_)
  std::size_t mlp_width_;                                       // mlp_width(config_)
  std::vector<std::unique_ptr<AttentionLayer>> traced_layers_;  // of the last trace()
  std::vector<HeadAblation> ablated_;                           // ablate()'s heads
  std::vector<PackedLinear> packed_;  // [layers · kProjections + 1], see pack_weights
  bool packed_current_ = false;
  std::vector<std::vector<float>> head_scales_;  // per layer [heads] (1: kept); empty: none
};

}  // namespace attn
