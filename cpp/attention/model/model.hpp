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
#include "attention/model/block.hpp"
#include "attention/model/model_config.hpp"
#include "attention/ops/causal_attention.hpp"
#include "attention/ops/half.hpp"
#include "attention/ops/linear.hpp"
#include "attention/ops/quantized_weights.hpp"
#include "attention/tensor.hpp"

namespace attn {

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

// A weight matrix a loaded checkpoint keeps in its GGUF file's quantized blocks: its row ranges in
// order, each with its type (a fused parameter's tensors may differ, e.g. v in Q6_K beside q and k
// in Q4_K).
struct KeptQuantized {
  std::string name;
  std::vector<std::pair<GgmlType, std::size_t>> parts;  // (type, rows)
};

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
  // One step: the residual row in and out of each block, the final norm, the logits [vocab], and
  // each block's activations (att: the new query's row [heads, length]).
  AlignedVector<float> x_, next_, final_, logits_, mean_, rstd_;
  std::vector<BlockActivations> blocks_;
  LinearScratch linear_scratch_;
  AttentionScratch attention_scratch_;
};

// One position run through the cache (Model::decode): views into the cache, valid until its next
// step.
struct CachedStep {
  std::span<const float> logits;                  // [vocab]: the new position's
  std::vector<std::span<const float>> attention;  // per layer [heads, length]: its query's row
};

// How one forward runs beyond its ids: the heads it ablates (ablate()'s, or `heads` instead, each
// checked as ablate() checks them), one more head on top (head_ablation's one-off), and whether it
// computes every position's logits or each sequence's last position's only.
struct ForwardRun {
  std::optional<HeadAblation> extra;
  const std::vector<HeadAblation>* heads = nullptr;  // nullptr: ablate()'s
  bool all_logits = true;
};

// The forward's results: views into the model's buffers, valid until its next call.
struct ModelOutput {
  std::span<const float> logits;  // [batch·n·vocab], or [batch·vocab]: the last positions only
  std::vector<std::span<const float>> attention;  // per layer [batch·heads·n·n], causal
};

class Model {
 public:
  // A loaded checkpoint's model: the parameters named in `kept_half` (weight matrices, each with
  // its file's 2-byte kind) stay in that form, widened as the kernels read them, those in
  // `kept_quantized` in their quantized blocks, dequantized as the kernels stream them; the others
  // are float. Every parameter starts at 0 (the import fills them).
  Model(const ModelConfig& config, const std::vector<std::pair<std::string, HalfKind>>& kept_half,
        const std::vector<KeptQuantized>& kept_quantized = {});
  // A small model (createModel's options), initialised from options.seed as below.
  explicit Model(const SmallModelOptions& options) : Model(small_model_config(options)) {}

  // Validates the config, lays out the parameters and initialises them from config.seed:
  // LayerNorm weights 1 and biases 0, every linear bias 0, every other weight N(0, 0.02²)
  // (GPT-2's scheme), out_proj and mlp.proj weights N(0, (0.02/√(2·layers))²); drawn in table
  // order from one NumpyRandomState(seed), so a seed always gives the same model.
  explicit Model(const ModelConfig& config);

  const ModelConfig& config() const { return config_; }
  // Every RoPE layer's θ per rotated pair (a GGUF file's rope_freqs.weight, known only once its
  // data is read), said to come from `scaling`; the config validated again (attn::Error on a
  // count other than the rotated pairs, or a θ not finite and positive; the model unchanged).
  void set_rope_frequencies(const std::vector<double>& frequencies, RopeScaling scaling);
  // In buffer order: embed.weight, pos.weight, layers.i.{ln1, attn, ln2, mlp}…, ln_f,
  // unembed.weight — only the tensors the config has.
  const std::vector<ParameterInfo>& parameter_table() const { return table_; }
  const ParameterInfo& parameter_info(const std::string& name) const;  // throws if absent
  std::size_t parameter_count() const { return params_.size(); }

  // The float parameters (every parameter unless some are kept 2-byte or quantized).
  std::span<float> parameters() {
    packed_current_ = false;  // the caller may change them: pack again before the next forward
    return params_;
  }
  std::span<const float> parameters() const { return params_; }
  // A float parameter (a 2-byte or quantized one throws attn::Error: see parameter_values,
  // half_parameter and quantized_parameter).
  std::span<float> parameter(const std::string& name);
  // Any parameter's values as float (a 2-byte one widened, a quantized one dequantized): a copy.
  std::vector<float> parameter_values(const std::string& name) const;
  // A 2-byte parameter's stored values (throws for a float one).
  std::span<std::uint16_t> half_parameter(const std::string& name);
  // A quantized parameter's blocks (throws for another one).
  QuantizedWeights& quantized_parameter(const std::string& name);
  // The parameters' bytes in memory: 4 per float value, 2 per kept 2-byte one, a quantized
  // matrix's blocks.
  std::uint64_t parameter_bytes() const;
  // Whether some weights are kept in the checkpoint's own form (2-byte or quantized): such a model
  // runs forwards but is not trained (its weights have no float32 copy to update).
  bool has_half_parameters() const { return !halves_.empty() || !quantized_.empty(); }
  bool has_quantized_parameters() const { return !quantized_.empty(); }
  // A weight matrix as stored (float, 2-byte or quantized), for the kernels; empty when absent.
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
  ModelOutput forward(std::span<const std::int32_t> ids, std::size_t batch, std::size_t n,
                      const ForwardRun& run);

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
  // x_l without a norm before the attention, [batch·n, d_model]. An AttentionLayer with that
  // block's weights and attention switches (as trace() builds it), causal or windowed, computes
  // the layer's attention from it.
  // Throws attn::Error before any forward or for a layer out of range.
  std::span<const float> attention_input(std::size_t layer) const;
  // What the last forward (or trace, or loss_and_gradients) kept, for the analyses
  // (logit_lens.hpp, attention_rollout.hpp, logit_attribution.hpp): the residual stream entering
  // block `index` (TransformerLens's resid_pre), or, index == layers, after the last block
  // (before the final norm), [batch·n, d_model]; and block `layer`'s activations (its ctx is
  // hook_z: each head's A·V before out_proj, ablated heads scaled; att its attention weights).
  // Throws attn::Error before any forward or for an index out of range.
  std::span<const float> residual(std::size_t index) const;
  const BlockActivations& activations(std::size_t layer) const;
  // logits [rows, vocab] of residual rows x [rows, d_model] exactly as the forward computes its
  // logits from its last residual: the final norm (each row with its own statistics), the
  // unembedding, the final soft-cap. Bit for bit the forward's on the same rows.
  void logits_of_residual(const float* x, std::size_t rows, AlignedVector<float>& logits) const;
  // The unembedding matrix as stored: [vocab, d_model] (unembed.weight, or embed.weight when
  // tied).
  StoredWeights unembedding() const { return unembed_weights_; }

  // Activation patching's runs (activation_patching.hpp). The rows entering block 0 for one
  // sequence ids [n] (checked as forward checks them) from position 0: the embeddings (times the
  // embedding scale) plus the learned or sinusoidal positions, out [n, d_model].
  void embedding(std::span<const std::int32_t> ids, AlignedVector<float>& out) const;
  // Several sequences through blocks first … layers − 1 at once, each through its own keys and
  // values: sequences[l − first] are layer l's caches (the same rows and lengths in every layer,
  // each cache holding its sequence's earlier positions' keys and values); x [M, d_model] the rows
  // entering block `first`, one sequence's after another (M = Σ rows); out [M, d_model] those rows
  // after the last block, or with last_rows_only [sequences, d_model]: each sequence's last row
  // alone, the last block computing only those (BlockRun::last_rows_only; its hooks after z see
  // those rows). The heads ablated now are ablated; hooks (or nullptr) see each block's
  // resid_pre, z, attn_out and mlp_out. Leaves residual() and activations() as they were.
  void run_sequences(std::size_t first, std::span<const float> x,
                     std::vector<std::vector<CachedSequence>>& sequences, const RunHooks* hooks,
                     AlignedVector<float>& out, bool last_rows_only = false);
  // out[r] = logit[a] − logit[b] of row r of x [rows, d_model]: the final norm (each row with its
  // own statistics) in float as the forward computes it, then the two logits in float64 from the
  // normed row and the unembedding's rows a and b, soft-capped when the config caps the logits.
  void logit_differences(const float* x, std::size_t rows, std::int32_t a, std::int32_t b,
                         double* out) const;

  // Layer `layer`'s attention as a layer of its own (what trace() runs): its sizes, q/k/v and
  // output biases, positional rope (the block's RoPE spec: pairing, base, frequencies, rotary
  // dims) or none, its scale, soft-cap and q/k norms. Throws attn::Error for a layer out of
  // range.
  LayerConfig layer_config(std::size_t layer) const;

  // forward on one sequence ids [n], then every layer's attention run again, traced, by an
  // AttentionLayer over that block's weights in the parameter buffer (borrowed, not copied), on
  // ln1(x_l) (x_l without a norm before the attention), causal or windowed, positional rope or
  // none, with the block's q/k norms, partial rotary, scale and soft-cap (trace_head as
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
    std::size_t ln1_post_w, ln1_post_b, ln2_post_w, ln2_post_b, q_norm_w, k_norm_w;
    StoredWeights in, out, fc, proj;  // the weight matrices as stored (float or 2-byte)
  };

  void initialise();
  void check_ids(std::span<const std::int32_t> ids, std::size_t batch, std::size_t n) const;
  // Every block over ids [batch·n] from position 0, through the cache when there is one (batch
  // 1: prefill); all_logits false: the logits of each sequence's last position only (logits_
  // [batch, vocab]).
  // scales: per layer [heads] the heads ablated (head_scales_, or a call's own; empty: none).
  void run_forward(const std::int32_t* ids, std::size_t batch, std::size_t n,
                   const std::vector<std::vector<float>>& scales,
                   std::optional<HeadAblation> ablation = std::nullopt, bool all_logits = true,
                   KvCache* cache = nullptr);
  // The per-layer scales of `heads` (each checked as ablate() checks it).
  std::vector<std::vector<float>> scales_of(const std::vector<HeadAblation>& heads) const;
  void check_ablation(const HeadAblation& head) const;
  // Block `layer`'s weights (their packed copies when current) and its heads ablated by `scales`
  // (per layer [heads]; empty: none) and `extra`.
  BlockWeights block_weights(std::size_t layer) const;
  static BlockAblation block_ablation(std::size_t layer,
                                      const std::vector<std::vector<float>>& scales,
                                      std::optional<HeadAblation> extra);
  // out [rows, d] = the embeddings of ids [rows] (times the config's embedding scale) plus
  // positions pos [rows, d] (nullptr: none): the full forward's and a cached step's one input.
  void embed_rows(const std::int32_t* ids, const float* pos, float* out, std::size_t batch,
                  std::size_t n) const;
  // The positions the embedding adds for n rows from position 0: the learned table, or the
  // sinusoidal encoding written into `sinusoidal` [n, d]; nullptr without positions.
  const float* positions(std::size_t n, AlignedVector<float>& sinusoidal) const;
  // The rows layer `layer`'s attention projects in the last forward: ln1(x_l), or x_l when the
  // block has no norm before its attention.
  const AlignedVector<float>& attention_input_rows(std::size_t layer) const;
  // logits [rows, vocab] = unembed(final_norm(x [rows, d])), soft-capped when the config caps
  // them (`normed` keeps the final norm).
  void logits_of(const float* x, std::size_t rows, AlignedVector<float>& normed,
                 AlignedVector<float>& mean, AlignedVector<float>& rstd, float* logits,
                 LinearScratch& scratch, std::size_t pack_values) const;
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
  const PackedLinear* packed(std::size_t slot) const {
    return packed_current_ && slot < packed_.size() ? &packed_[slot] : nullptr;
  }

  void lay_out(const std::vector<std::pair<std::string, HalfKind>>& kept_half,
               const std::vector<KeptQuantized>& kept_quantized = {});
  StoredWeights stored(const std::string& name) const;
  // Layer l's attention weights as float for a traced layer: borrowed, or widened into
  // traced_weights_ when kept 2-byte.
  std::span<const float> traced_weights(std::size_t offset, const StoredWeights& stored,
                                        std::size_t size);

  ModelConfig config_;
  std::vector<ParameterInfo> table_;
  AlignedVector<float> params_, grads_;
  std::vector<std::vector<std::uint16_t>> halves_;  // the 2-byte parameters, one buffer each
  // the quantized parameters (unique_ptr: StoredWeights point at them)
  std::vector<std::unique_ptr<QuantizedWeights>> quantized_;
  std::size_t embed_ = kNone, pos_ = kNone, lnf_w_ = kNone, lnf_b_ = kNone, unembed_ = kNone;
  StoredWeights embed_weights_, unembed_weights_;
  std::vector<std::vector<float>> traced_weights_;  // widened copies the traced layers borrow
  std::vector<Layer> layers_;

  // activations of the last forward (what the backward needs)
  std::size_t batch_ = 0, n_ = 0;
  AlignedVector<float> sinusoidal_;             // [n, d]
  std::vector<AlignedVector<float>> residual_;  // layers + 1 of [M, d]
  std::vector<BlockActivations> acts_;
  AlignedVector<float> lnf_, lnf_mean_, lnf_rstd_, logits_, probs_;
  AlignedVector<float> last_rows_;  // [batch, d]: each sequence's last residual row
  // backward buffers and matmul scratch
  AlignedVector<float> d_logits_, d_resid_, d_h_, d_ctx_, d_qkv_, d_fc_, d_gelu_;
  LinearScratch linear_scratch_;
  AttentionScratch attention_scratch_;
  std::vector<std::unique_ptr<AttentionLayer>> traced_layers_;  // of the last trace()
  std::vector<HeadAblation> ablated_;                           // ablate()'s heads
  BlockActivations sequence_acts_;                              // run_sequences' blocks
  std::vector<PackedLinear> packed_;  // [layers · kProjections + 1], see pack_weights
  bool packed_current_ = false;
  std::vector<std::vector<float>> head_scales_;  // per layer [heads] (1: kept); empty: none
};

}  // namespace attn
