// A model's configuration (docs/API.md, "Models" and "Real models"): its sizes, the model-wide
// switches, and each decoder block's own architecture (BlockConfig, one per layer, in the style of
// gemma.cpp's per-layer config); checked by validate(), resolved into attention shapes and MLP
// widths, and laid out as the parameter table. The small models' flat options (createModel's)
// build one with small_model_config; a checkpoint family's file builds one from config.json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attention/fields.hpp"
#include "attention/ops/attention_shape.hpp"
#include "attention/ops/half.hpp"
#include "attention/ops/rope.hpp"
#include "attention/option_kinds.hpp"

namespace attn {

inline constexpr std::size_t kMaxModelVocab = 512;
inline constexpr std::size_t kMaxModelContext = 1024;
inline constexpr std::size_t kMaxModelDModel = 512;
inline constexpr std::size_t kMaxModelLayers = 4;
// A loaded checkpoint's own bounds (ModelConfig::checkpoint): 64 layers (GPT-2 XL has 48), d
// 8 192, Qwen2's 151 936 and Gemma 3's 262 144 ids, a learned position table of 2 048 rows (GPT-2
// has 1 024; some conversions keep 2 048) and, with RoPE (no table), 131 072 positions (the
// context only bounds n; the memory a forward needs is bounded by kMaxModelAttentionValues).
inline constexpr std::size_t kMaxCheckpointVocab = 262144;
inline constexpr std::size_t kMaxCheckpointContext = 2048;
inline constexpr std::size_t kMaxCheckpointRopeContext = 131072;
inline constexpr std::size_t kMaxCheckpointDModel = 8192;
inline constexpr std::size_t kMaxCheckpointLayers = 64;
// batch·heads·n² attention weights kept per layer for the backward (256 MB of floats).
inline constexpr std::size_t kMaxModelAttentionValues = std::size_t{1} << 26;

// The norm around each block's sublayers (and of q and k, where a block has them) and at the end.
enum class NormKind {
  None,          // no norms (a small model with layerNorm false)
  LayerNorm,     // (x − mean)·rstd ⊙ w + b (GPT-2, GPT-NeoX, the small models)
  RmsNorm,       // x · rsqrt(mean(x²) + norm_eps) ⊙ w (the Llama family, Qwen3, OLMo 2, Phi-3)
  GemmaRmsNorm,  // x · rsqrt(mean(x²) + norm_eps) ⊙ (1 + w) (Gemma 2 and 3)
};
// Where a block's norms sit around each sublayer (attention, MLP): before it (pre-norm: x +
// f(norm(x))), after it (x + norm(f(x)): OLMo 2), or both (x + norm(f(norm(x))): Gemma 2 and 3).
enum class NormPlacement { Pre, Post, Both };
// A block's MLP after its attention.
enum class MlpKind {
  None,   // attention only (a small model with mlp false)
  Plain,  // proj(act(fc(h))), fc [mlp_width, d]
  Gated,  // proj(act(gate(h)) ⊙ up(h)): fc [2·mlp_width, d] holds gate's rows, then up's
};
// The MLP's activation: GELU (exact, or GPT-2's tanh form) or SiLU (the Llama family's SwiGLU);
// gated: SwiGLU with SiLU, GeGLU with either GELU (Gemma's tanh form).
enum class Activation { GeluErf, GeluTanh, Silu };

// The names a checkpoint's norm and a block's MLP are exported by (m.config.norm,
// m.config.mlpKind): "none", "layer-norm", "rms-norm", "rms-norm-1+w" (Gemma's (1 + w) weight);
// "none", "gelu" (a plain MLP), "swiglu" (gated, SiLU), "geglu" (gated, GELU: Gemma's GELU-tanh).
std::string_view norm_name(NormKind kind);
struct BlockConfig;
std::string_view mlp_name(const BlockConfig& block);

// Which linear layers have a bias (the small models: all or none; Qwen2: q/k/v only).
struct LinearBiases {
  bool qkv = true;  // in_proj_bias
  bool out = true;  // out_proj.bias
  bool mlp = true;  // mlp.fc.bias and mlp.proj.bias
};

// What one decoder block computes that may differ from the next block's (gemma.cpp's per-layer
// config): its attention (window, RoPE, scale, soft-cap, q/k norms), its MLP, and how its
// sublayers meet the residual stream.
struct BlockConfig {
  std::size_t window = 0;  // > 0: a sliding window (query i sees keys i − window < j ≤ i)
  RopeSpec rope;  // with positional rope: pairing, θ (rope_theta), scaling and rotary dims
  MlpKind mlp = MlpKind::None;
  Activation activation = Activation::GeluErf;
  NormPlacement norms = NormPlacement::Pre;  // where the model's norms sit around each sublayer
  QkNorm qk_norm = QkNorm::None;             // q/k norms before RoPE
  double attention_scale = 0.0;  // scores × it; 0: 1/√head_dim (Gemma: query_pre_attn_scalar^−½)
  double logit_softcap = 0.0;  // > 0: scores → cap·tanh(scores/cap) (Gemma 2)
  // x + attn(ln1(x)) + mlp(ln2(x)), both sublayers reading the block's input (GPT-NeoX's
  // use_parallel_residual), instead of one after the other.
  bool parallel_residual = false;

  bool operator==(const BlockConfig&) const = default;
};

struct ModelConfig {
  std::size_t vocab = 32;    // 2 … 512 token ids
  std::size_t context = 64;  // 1 … 1024: the longest sequence (rows of pos.weight)
  std::size_t d_model = 64;  // 1 … 512, a multiple of heads unless head_dim is set
  std::size_t heads = 4;
  std::size_t layers = 2;     // 1 … 4; blocks holds one BlockConfig per layer
  std::size_t kv_heads = 0;   // 0: heads; fewer: grouped-query attention (must divide heads)
  std::size_t head_dim = 0;   // 0: d_model / heads
  std::size_t mlp_width = 0;  // 0: 4·d_model
  PositionalKind positional = PositionalKind::Learned;  // none | sinusoidal | learned | rope
  NormKind norm = NormKind::LayerNorm;  // around each sublayer (BlockConfig::norms), at the end
  double norm_eps = 1e-5;               // RMSNorm's ε (rms_norm_eps); LayerNorm's is 1e-5
  LinearBiases bias;
  bool tied = false;  // logits = ln_f(x)·embed.weightᵀ (no unembed.weight)
  // The embeddings' factor (Gemma: √d_model rounded to the checkpoint's dtype); 1: none.
  double embedding_scale = 1.0;
  double final_softcap = 0.0;  // > 0: logits → cap·tanh(logits/cap) (Gemma 2's final cap)
  std::vector<BlockConfig> blocks{std::size_t{2}, BlockConfig{}};  // [layers]
  std::uint32_t seed = 1;                                          // the initial weights
  // Weights read from a checkpoint (checkpoint_import.hpp): the kMaxCheckpoint* bounds instead of
  // kMaxModel*, parameters start at 0 instead of being drawn, and the gradients' buffer is only
  // allocated by the first loss_and_gradients (a checkpoint's forward needs no second copy).
  bool checkpoint = false;
};

// The small models' options (createModel's, docs/API.md): every block alike, each switch flat.
struct SmallModelOptions {
  std::size_t vocab = 32;
  std::size_t context = 64;
  std::size_t d_model = 64;
  std::size_t heads = 4;
  std::size_t layers = 2;
  PositionalKind positional = PositionalKind::Learned;
  bool layer_norm = true;  // pre-LN in every block (ln1, ln2) and a final ln_f
  bool mlp = false;        // x = x + proj(GELU(fc(ln2(x)))) after each attention block, 4·d_model
  bool tied = false;       // logits = ln_f(x)·embed.weightᵀ (no unembed.weight)
  bool bias = true;        // false drops every linear bias (LayerNorm keeps its affine bias)
  GeluKind gelu = GeluKind::Erf;  // exact erf (torch.nn.GELU()); tanh for GPT-2 checkpoints
  std::uint32_t seed = 1;         // the initial weights
};
// createModel's options by their JS API names (fields.hpp).
template <class Visitor>
void visit_fields(SmallModelOptions& o, Visitor& v) {
  v.count("vocab", o.vocab, 0, kFieldSizeMax);
  v.count("context", o.context, 0, kFieldSizeMax);
  v.count("dModel", o.d_model, 0, kFieldSizeMax);
  v.count("heads", o.heads, 0, kFieldSizeMax);
  v.count("layers", o.layers, 0, kFieldSizeMax);
  v.choice("positional", o.positional, positional_kinds(), parse_positional_kind);
  v.boolean("layerNorm", o.layer_norm);
  v.boolean("mlp", o.mlp);
  v.boolean("tied", o.tied);
  v.boolean("bias", o.bias);
  v.choice("gelu", o.gelu, gelu_kinds(), parse_gelu_kind);
  v.count("seed", o.seed, 0, kFieldSizeMax);
}
ModelConfig small_model_config(const SmallModelOptions& options);
// Every block of `config` alike: blocks = `layers` copies of `block` (a count past any model's is
// not allocated but left for validate to refuse).
void set_uniform_blocks(ModelConfig& config, const BlockConfig& block);
// The flat options a config's blocks agree on (a checkpoint's too: what the JS API reports as
// layerNorm, mlp, bias, gelu).
SmallModelOptions small_model_options(const ModelConfig& config);

// Throws attn::Error naming the field, its bound and the value, e.g.
// "layers must be between 1 and 4, got 5".
void validate(const ModelConfig& config);

// What a validated config resolves to: layer l's attention (its q|k|v layout and window), the
// MLP's width, and whether any block has an MLP or a norm.
AttentionShape attention_shape(const ModelConfig& config, std::size_t layer = 0);
std::size_t mlp_width(const ModelConfig& config);
std::size_t fc_rows(const ModelConfig& config, std::size_t layer);  // 2·width when gated
bool has_mlp(const ModelConfig& config, std::size_t layer);
// Whether layer `layer` normalises its sublayers' input (ln1, ln2) and output (ln1_post,
// ln2_post).
bool has_pre_norm(const ModelConfig& config, std::size_t layer);
bool has_post_norm(const ModelConfig& config, std::size_t layer);
// The width a q/k norm's weight has: head_dim per head, or the whole projection's (q: heads·
// head_dim, k: kv_heads·head_dim); 0 without one.
std::size_t q_norm_width(const ModelConfig& config, std::size_t layer);
std::size_t k_norm_width(const ModelConfig& config, std::size_t layer);
// The first switch a model has that training's backward cannot differentiate, named for a message
// ("RMSNorm", "a gated MLP", …); empty when the model can be trained.
std::string untrainable_switch(const ModelConfig& config);
GeluKind gelu_kind(Activation activation);  // GeluErf → Erf, GeluTanh → Tanh (Silu: Erf)

// One parameter tensor: values [offset, offset + size) of the parameter buffer, row-major.
struct ParameterInfo {
  std::string name;  // e.g. "layers.0.attn.in_proj_weight"
  std::vector<std::size_t> shape;
  std::size_t offset = 0;  // in the float buffer, or (half) which of the 2-byte buffers
  std::size_t size = 0;
  std::optional<HalfKind> half;  // kept in a checkpoint's 2-byte form (F16 or BF16)
  bool quantized = false;        // kept in a GGUF file's quantized blocks (offset: which matrix)
};

// Validates the config and lays out its parameters in buffer order (Model::parameter_table);
// parameter_count is the buffer's size.
std::vector<ParameterInfo> parameter_layout(const ModelConfig& config);
std::uint64_t parameter_count(const ModelConfig& config);

}  // namespace attn
