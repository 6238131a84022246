// A model's configuration checked, resolved and laid out as parameters, see model_config.hpp.
#include "attention/model/model_config.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "attention/error.hpp"
#include "attention/message_text.hpp"

namespace attn {

std::string_view norm_name(NormKind kind) {
  constexpr const char* names[] = {"none", "layer-norm", "rms-norm", "rms-norm-1+w"};  // by kind
  return names[static_cast<std::size_t>(kind)];
}

std::string_view mlp_name(const BlockConfig& block) {
  switch (block.mlp) {
    case MlpKind::None:
      return "none";
    case MlpKind::Plain:
      return "gelu";
    case MlpKind::Gated:
      return block.activation == Activation::Silu ? "swiglu" : "geglu";
  }
  return "none";
}

namespace {

void check_range(const char* field, std::size_t value, std::size_t low, std::size_t high) {
  if (value < low || value > high) {
    throw Error(std::string(field) + " must be between " + std::to_string(low) + " and " +
                std::to_string(high) + ", got " + std::to_string(value));
  }
}

}  // namespace

namespace {

// The fields a small model's options and its config share, copied either way.
template <class From, class To>
void copy_shared_fields(const From& from, To& to) {
  to.vocab = from.vocab;
  to.context = from.context;
  to.d_model = from.d_model;
  to.heads = from.heads;
  to.layers = from.layers;
  to.positional = from.positional;
  to.tied = from.tied;
  to.seed = from.seed;
}

}  // namespace

ModelConfig small_model_config(const SmallModelOptions& o) {
  ModelConfig c;
  copy_shared_fields(o, c);
  c.norm = o.layer_norm ? NormKind::LayerNorm : NormKind::None;
  c.bias = {o.bias, o.bias, o.bias};
  BlockConfig block;
  block.mlp = o.mlp ? MlpKind::Plain : MlpKind::None;
  block.activation = o.gelu == GeluKind::Tanh ? Activation::GeluTanh : Activation::GeluErf;
  set_uniform_blocks(c, block);
  return c;
}

void set_uniform_blocks(ModelConfig& config, const BlockConfig& block) {
  config.blocks.assign(std::min(config.layers, kMaxCheckpointLayers + 1), block);
}

SmallModelOptions small_model_options(const ModelConfig& c) {
  SmallModelOptions o;
  copy_shared_fields(c, o);
  o.layer_norm = c.norm != NormKind::None;
  o.mlp = !c.blocks.empty() && c.blocks.front().mlp != MlpKind::None;
  o.bias = c.bias.qkv;
  o.gelu = c.blocks.empty() ? GeluKind::Erf : gelu_kind(c.blocks.front().activation);
  return o;
}

GeluKind gelu_kind(Activation activation) {
  return activation == Activation::GeluTanh ? GeluKind::Tanh : GeluKind::Erf;
}

void validate(const ModelConfig& c) {
  const bool rope = c.positional == PositionalKind::Rope;
  const std::size_t max_context = !c.checkpoint ? kMaxModelContext
                                  : rope        ? kMaxCheckpointRopeContext
                                                : kMaxCheckpointContext;
  check_range("vocab", c.vocab, 2, c.checkpoint ? kMaxCheckpointVocab : kMaxModelVocab);
  check_range("context", c.context, 1, max_context);
  check_range("d_model", c.d_model, 1, c.checkpoint ? kMaxCheckpointDModel : kMaxModelDModel);
  check_range("heads", c.heads, 1, c.d_model);
  check_range("layers", c.layers, 1, c.checkpoint ? kMaxCheckpointLayers : kMaxModelLayers);
  if (c.blocks.size() != c.layers) {
    throw Error("the model describes " + std::to_string(c.blocks.size()) + " blocks for " +
                std::to_string(c.layers) + " layers");
  }
  if (c.head_dim == 0 && c.d_model % c.heads != 0) {
    throw Error("d_model must be a multiple of heads: d_model " + std::to_string(c.d_model) +
                " is not divisible by heads " + std::to_string(c.heads));
  }
  if (c.head_dim != 0) check_range("head_dim", c.head_dim, 1, c.d_model);
  if (c.kv_heads != 0) {
    check_range("kv_heads", c.kv_heads, 1, c.heads);
    if (c.heads % c.kv_heads != 0) {
      throw Error(
          "heads must be a multiple of kv_heads (each key/value head serves a group of "
          "query heads): heads " +
          std::to_string(c.heads) + ", kv_heads " + std::to_string(c.kv_heads));
    }
  }
  if (c.mlp_width != 0) check_range("mlp_width", c.mlp_width, 1, 8 * c.d_model);
  if (!(c.norm_eps > 0.0 && c.norm_eps < 1.0)) {
    throw Error("norm_eps must be between 0 and 1 (exclusive), got " + std::to_string(c.norm_eps));
  }
  if (c.positional == PositionalKind::Alibi) {
    throw Error(
        "positional must be 'none', 'sinusoidal', 'learned' or 'rope' for a model, got "
        "'alibi'");
  }
  const std::size_t head_dim = c.head_dim ? c.head_dim : c.d_model / c.heads;
  if (rope && head_dim % 2 != 0) {
    throw Error(
        "positional 'rope' rotates pairs of dimensions: it needs an even d_k = d_model / "
        "heads, got " +
        std::to_string(head_dim));
  }
  if (!(c.embedding_scale > 0.0 && std::isfinite(c.embedding_scale))) {
    throw Error("the embeddings' scale must be a finite number above 0, got " +
                number_text(c.embedding_scale));
  }
  if (!(c.final_softcap >= 0.0 && std::isfinite(c.final_softcap))) {
    throw Error("final_logit_softcapping must be a finite number above 0, got " +
                number_text(c.final_softcap));
  }
  const bool rms = c.norm == NormKind::RmsNorm || c.norm == NormKind::GemmaRmsNorm;
  for (std::size_t l = 0; l < c.blocks.size(); ++l) {
    const BlockConfig& block = c.blocks[l];
    const std::string layer = "layer " + std::to_string(l) + ": ";
    if (block.mlp == MlpKind::Plain && block.activation == Activation::Silu) {
      throw Error(layer + "an MLP with SiLU is gated here (SwiGLU): a plain MLP takes GELU");
    }
    const std::size_t rotated = block.rope.rotated(head_dim);
    if (rope && (rotated % 2 != 0 || rotated > head_dim)) {
      throw Error(layer + "RoPE rotates pairs of a head's dimensions: its rotary dims must be " +
                  "even and at most head_dim " + std::to_string(head_dim) + ", got " +
                  std::to_string(rotated));
    }
    if (rope && !block.rope.frequencies.empty() && block.rope.frequencies.size() != rotated / 2) {
      throw Error("rope has " + std::to_string(block.rope.frequencies.size()) +
                  " frequencies, expected " +
                  (rotated == head_dim ? std::string("head_dim") : std::string("rotary dims")) +
                  " / 2 = " + std::to_string(rotated / 2));
    }
    if (rope && !(block.rope.base > 1.0 && std::isfinite(block.rope.base))) {
      throw Error("rope's base (rope_theta) must be a finite number above 1, got " +
                  std::to_string(block.rope.base));
    }
    if (block.norms != NormPlacement::Pre && c.norm == NormKind::None) {
      throw Error(layer + "norms after a sublayer need a norm kind (the model has none)");
    }
    if (block.qk_norm != QkNorm::None && !rms) {
      throw Error(layer + "q/k norms are RMSNorms: the model's norm must be an RMSNorm");
    }
    if (block.parallel_residual &&
        (block.mlp == MlpKind::None || block.norms != NormPlacement::Pre)) {
      throw Error(layer + "a parallel residual needs an MLP and norms before each sublayer");
    }
    if (!(block.attention_scale >= 0.0 && std::isfinite(block.attention_scale))) {
      throw Error(layer + "the attention scale must be a finite number above 0, got " +
                  number_text(block.attention_scale));
    }
    if (!(block.logit_softcap >= 0.0 && std::isfinite(block.logit_softcap))) {
      throw Error(layer + "attn_logit_softcapping must be a finite number above 0, got " +
                  number_text(block.logit_softcap));
    }
  }
}

AttentionShape attention_shape(const ModelConfig& c, std::size_t layer) {
  const std::size_t head_dim = c.head_dim ? c.head_dim : c.d_model / c.heads;
  if (layer >= c.blocks.size()) return {c.heads, c.kv_heads ? c.kv_heads : c.heads, head_dim};
  const BlockConfig& block = c.blocks[layer];
  return {c.heads,
          c.kv_heads ? c.kv_heads : c.heads,
          head_dim,
          block.window,
          block.attention_scale,
          block.logit_softcap};
}
std::size_t mlp_width(const ModelConfig& c) {
  return c.mlp_width ? c.mlp_width : 4 * c.d_model;
}
bool has_mlp(const ModelConfig& c, std::size_t layer) {
  return c.blocks.at(layer).mlp != MlpKind::None;
}
std::size_t fc_rows(const ModelConfig& c, std::size_t layer) {
  return c.blocks.at(layer).mlp == MlpKind::Gated ? 2 * mlp_width(c) : mlp_width(c);
}
bool has_pre_norm(const ModelConfig& c, std::size_t layer) {
  return c.norm != NormKind::None && c.blocks.at(layer).norms != NormPlacement::Post;
}
bool has_post_norm(const ModelConfig& c, std::size_t layer) {
  return c.norm != NormKind::None && c.blocks.at(layer).norms != NormPlacement::Pre;
}
std::size_t q_norm_width(const ModelConfig& c, std::size_t layer) {
  const AttentionShape shape = attention_shape(c, layer);
  switch (c.blocks.at(layer).qk_norm) {
    case QkNorm::None:
      return 0;
    case QkNorm::PerHead:
      return shape.head_dim;
    case QkNorm::Whole:
      return shape.q_width();
  }
  return 0;
}
std::size_t k_norm_width(const ModelConfig& c, std::size_t layer) {
  const QkNorm kind = c.blocks.at(layer).qk_norm;
  const AttentionShape shape = attention_shape(c, layer);
  return kind == QkNorm::Whole ? shape.kv_width() : kind == QkNorm::PerHead ? shape.head_dim : 0;
}

std::string untrainable_switch(const ModelConfig& c) {
  if (c.norm == NormKind::RmsNorm || c.norm == NormKind::GemmaRmsNorm) return "RMSNorm";
  if (c.embedding_scale != 1.0) return "a scaled embedding";
  if (c.final_softcap != 0.0) return "final_logit_softcapping";
  for (const BlockConfig& block : c.blocks) {
    if (block.mlp == MlpKind::Gated) return "a gated MLP (SwiGLU, GeGLU)";
    if (block.norms != NormPlacement::Pre) return "norms after a sublayer";
    if (block.qk_norm != QkNorm::None) return "q/k norms";
    if (block.parallel_residual) return "a parallel residual (use_parallel_residual)";
    if (block.attention_scale != 0.0) return "an attention scale other than 1/√head_dim";
    if (block.logit_softcap != 0.0) return "attn_logit_softcapping";
    if (block.rope.rotary_dims != 0) return "a partial rotary (rotary_pct)";
  }
  return {};
}

std::vector<ParameterInfo> parameter_layout(const ModelConfig& config) {
  validate(config);
  const std::size_t d = config.d_model, v = config.vocab, W = mlp_width(config);
  std::vector<ParameterInfo> table;
  const auto add = [&](const std::string& name, std::vector<std::size_t> dims) {
    ParameterInfo info;
    info.name = name;
    info.size = 1;
    for (std::size_t s : dims) info.size *= s;
    info.shape = std::move(dims);
    info.offset = table.empty() ? 0 : table.back().offset + table.back().size;
    table.push_back(std::move(info));
  };
  const auto add_norm = [&](const std::string& name) {
    if (config.norm == NormKind::None) return;
    add(name + ".weight", {d});
    if (config.norm == NormKind::LayerNorm) add(name + ".bias", {d});
  };
  add("embed.weight", {v, d});
  if (config.positional == PositionalKind::Learned) add("pos.weight", {config.context, d});
  for (std::size_t i = 0; i < config.layers; ++i) {
    const AttentionShape shape = attention_shape(config, i);
    const std::string prefix = "layers." + std::to_string(i) + ".";
    const bool pre = has_pre_norm(config, i), post = has_post_norm(config, i);
    if (pre) add_norm(prefix + "ln1");
    add(prefix + "attn.in_proj_weight", {shape.row(), d});
    if (config.bias.qkv) add(prefix + "attn.in_proj_bias", {shape.row()});
    if (const std::size_t q = q_norm_width(config, i)) add(prefix + "attn.q_norm.weight", {q});
    if (const std::size_t k = k_norm_width(config, i)) add(prefix + "attn.k_norm.weight", {k});
    add(prefix + "attn.out_proj.weight", {d, shape.q_width()});
    if (config.bias.out) add(prefix + "attn.out_proj.bias", {d});
    if (post) add_norm(prefix + "ln1_post");
    if (has_mlp(config, i)) {
      if (pre) add_norm(prefix + "ln2");
      add(prefix + "mlp.fc.weight", {fc_rows(config, i), d});
      if (config.bias.mlp) add(prefix + "mlp.fc.bias", {fc_rows(config, i)});
      add(prefix + "mlp.proj.weight", {d, W});
      if (config.bias.mlp) add(prefix + "mlp.proj.bias", {d});
      if (post) add_norm(prefix + "ln2_post");
    }
  }
  add_norm("ln_f");
  if (!config.tied) add("unembed.weight", {v, d});
  return table;
}

std::uint64_t parameter_count(const ModelConfig& config) {
  const auto table = parameter_layout(config);
  return table.empty() ? 0 : std::uint64_t{table.back().offset} + table.back().size;
}

}  // namespace attn
