// GPT-2 (GPT2LMHeadModel: gpt2, distilgpt2, …) as a checkpoint family: its config.json keys
// (Gpt2Config, every switch the core does not implement refused by name) and its tensors: Conv1D
// weights stored [in, out], the fused q|k|v c_attn, learned positions, LayerNorm, a tanh-GELU MLP
// and the unembedding tied to wte.
#include "attention/model/families/gpt2.hpp"

#include <cmath>
#include <string>

#include "attention/error.hpp"
#include "attention/model/checkpoint_import.hpp"

namespace attn {

namespace {

// GPT-2's tensors: its Conv1D layers store the weight [in, out] (transposed against ours) beside
// the bias [out]; a LayerNorm its weight and bias.
std::vector<FamilyTensor> gpt2_tensors() {
  using enum Dim;
  std::vector<FamilyTensor> tensors{{"wte.weight", "embed.weight", {Vocab, DModel}},
                                    {"wpe.weight", "pos.weight", {Context, DModel}}};
  const auto norm = [&](const std::string& stored, const std::string& ours) {
    for (const char* part : {".weight", ".bias"}) {
      tensors.push_back({stored + part, ours + part, {DModel}});
    }
  };
  const auto conv1d = [&](const std::string& stored, const std::string& weight,
                          const std::string& bias, Dim in, Dim out) {
    tensors.push_back({stored + ".weight", weight, {in, out}, StoredLayout::Transposed});
    tensors.push_back({stored + ".bias", bias, {out}});
  };
  const std::string h = "h.{i}.", ours = "layers.{i}.";
  norm(h + "ln_1", ours + "ln1");
  conv1d(h + "attn.c_attn", ours + "attn.in_proj_weight", ours + "attn.in_proj_bias", DModel,
         DModel3);
  conv1d(h + "attn.c_proj", ours + "attn.out_proj.weight", ours + "attn.out_proj.bias", DModel,
         DModel);
  norm(h + "ln_2", ours + "ln2");
  conv1d(h + "mlp.c_fc", ours + "mlp.fc.weight", ours + "mlp.fc.bias", DModel, DModel4);
  conv1d(h + "mlp.c_proj", ours + "mlp.proj.weight", ours + "mlp.proj.bias", DModel4, DModel);
  norm("ln_f", "ln_f");
  tensors.push_back({"lm_head.weight", "embed.weight", {Vocab, DModel}, StoredLayout::TiedCopy});
  return tensors;
}

// How llama.cpp's converter writes GPT-2 as GGUF (convert_hf_to_gguf.py, GPT2Model): the Conv1D
// weights transposed to [out, in], the causal-mask buffers dropped, output.weight (a copy of
// token_embd) optional.
FamilyGguf gpt2_gguf() {
  const std::string blk = "blk.{i}.", h = "h.{i}.";
  std::vector<GgufTensorName> tensors{{"token_embd.weight", "wte.weight", {}},
                                      {"position_embd.weight", "wpe.weight", {}}};
  struct Part {
    const char* gguf;
    const char* stored;
    bool conv1d;  // a Conv1D weight, which the converter writes [out, in]
  };
  const Part parts[] = {{"attn_norm", "ln_1", false},         {"attn_qkv", "attn.c_attn", true},
                        {"attn_output", "attn.c_proj", true}, {"ffn_norm", "ln_2", false},
                        {"ffn_up", "mlp.c_fc", true},         {"ffn_down", "mlp.c_proj", true}};
  for (const Part& part : parts) {
    tensors.push_back({blk + part.gguf + ".weight", h + part.stored + ".weight",
                       part.conv1d ? std::optional(StoredLayout::AsIs) : std::nullopt});
    tensors.push_back({blk + part.gguf + ".bias", h + part.stored + ".bias", {}});
  }
  tensors.push_back({"output_norm.weight", "ln_f.weight", {}});
  tensors.push_back({"output_norm.bias", "ln_f.bias", {}});
  tensors.push_back({"output.weight", "lm_head.weight", {}});
  return FamilyGguf{
      .architecture = "gpt2",
      .tensors = std::move(tensors),
      .config_keys = {{"block_count", "n_layer", true},
                      {"context_length", "n_positions", true},
                      {"embedding_length", "n_embd", true},
                      {"feed_forward_length", "n_inner"},
                      {"attention.head_count", "n_head", true},
                      {"attention.layer_norm_epsilon", "layer_norm_epsilon"}},
      // llama.cpp's GPT-2 graph uses ggml_gelu, GELU's tanh form.
      .implied_config = "\"activation_function\": \"gelu_new\"",
  };
}

}  // namespace

Gpt2Config gpt2_config(const ConfigJson& config) {
  const FamilyDescription& family = gpt2_family();
  const FamilySizeKeys& keys = family.size_keys;
  const std::string listed = std::string(keys.layers) + ", " + std::string(keys.heads) + ", " +
                             std::string(keys.d_model) + ", " + std::string(keys.context) +
                             " and " + std::string(keys.vocab);
  const auto required = [&](std::string_view key) {
    return config.count(key, "config.json has no " + std::string(key) + "; a " +
                                 std::string(family.display_name) + " config.json has " + listed);
  };
  Gpt2Config out;
  out.model_type = config.string_or("model_type", std::string(family.model_type));
  if (out.model_type != family.model_type) return out;  // the import refuses it by name
  out.n_layer = required(keys.layers);
  out.n_head = required(keys.heads);
  out.n_embd = required(keys.d_model);
  out.n_positions =
      required(config.has(keys.context) || !config.has(keys.context_alias) ? keys.context
                                                                           : keys.context_alias);
  out.vocab_size = required(keys.vocab);
  out.n_inner = config.count_or("n_inner", 0);
  out.layer_norm_epsilon = config.number_or("layer_norm_epsilon", out.layer_norm_epsilon);
  out.activation_function = config.string_or("activation_function", out.activation_function);
  out.scale_attn_weights = config.boolean_or("scale_attn_weights", out.scale_attn_weights);
  out.scale_attn_by_inverse_layer_idx =
      config.boolean_or("scale_attn_by_inverse_layer_idx", out.scale_attn_by_inverse_layer_idx);
  return out;
}

CheckpointConfig checkpoint_config(const Gpt2Config& c) {
  const FamilyDescription& family = gpt2_family();
  if (c.model_type != "gpt2") {
    throw Error("config.json has model_type '" + c.model_type.substr(0, 40) + "'; " +
                std::string(family.supported) + ", model_type 'gpt2'");
  }
  const auto positive = [](const char* field, std::size_t value) {
    if (value == 0) throw Error(std::string("config.json needs a positive ") + field + ", got 0");
  };
  positive("n_layer", c.n_layer);
  positive("n_head", c.n_head);
  positive("n_embd", c.n_embd);
  positive("n_positions", c.n_positions);
  positive("vocab_size", c.vocab_size);
  const auto n = [](std::size_t value) { return std::to_string(value); };
  if (c.n_embd % c.n_head != 0) {
    throw Error("config.json's n_embd " + n(c.n_embd) + " is not divisible by n_head " +
                n(c.n_head));
  }
  if (c.n_inner != 0 && c.n_inner != 4 * c.n_embd) {
    throw Error("config.json's n_inner is " + n(c.n_inner) +
                "; supported: null or 4 · n_embd = " + n(4 * c.n_embd));
  }
  if (!(std::abs(c.layer_norm_epsilon - 1e-5) <= 1e-12)) {
    throw Error("config.json's layer_norm_epsilon is " + std::to_string(c.layer_norm_epsilon) +
                "; supported: 1e-05 (GPT-2's)");
  }
  if (c.activation_function != "gelu_new" && c.activation_function != "gelu_pytorch_tanh" &&
      c.activation_function != "gelu") {
    throw Error("config.json's activation_function is '" + c.activation_function.substr(0, 40) +
                "'; supported: gelu_new, gelu_pytorch_tanh (GELU's tanh form) and gelu (erf)");
  }
  if (!c.scale_attn_weights) {
    throw Error("config.json has scale_attn_weights false; supported: true (scores / √d_k)");
  }
  if (c.scale_attn_by_inverse_layer_idx) {
    throw Error("config.json has scale_attn_by_inverse_layer_idx true; supported: false");
  }
  ModelConfig m;
  m.vocab = c.vocab_size;
  m.context = c.n_positions;
  m.d_model = c.n_embd;
  m.heads = c.n_head;
  m.layers = c.n_layer;
  m.positional = PositionalKind::Learned;
  m.norm = NormKind::LayerNorm;
  m.tied = true;
  m.bias = {true, true, true};
  BlockConfig block;
  block.mlp = MlpKind::Plain;
  block.activation = c.activation_function == "gelu" ? Activation::GeluErf : Activation::GeluTanh;
  set_uniform_blocks(m, block);
  m.checkpoint = true;
  m.seed = 0;  // nothing is drawn: every parameter comes from the file
  validate_checkpoint(m);
  return {&family, m, {}};
}

const FamilyDescription& gpt2_family() {
  static const FamilyDescription gpt2{
      .family = "gpt2",
      .model_type = "gpt2",
      .display_name = "GPT-2",
      .supported =
          "supported: the GPT-2 family (gpt2, distilgpt2 and other GPT2LMHeadModel "
          "checkpoints)",
      .name_prefix = "transformer.",
      .size_keys = {"n_layer", "n_head", "n_embd", "n_positions", "n_ctx", "vocab_size"},
      .tensors = gpt2_tensors(),
      .ignored = {"h.{i}.attn.bias", "h.{i}.attn.masked_bias"},
      .read_config =
          [](const ConfigJson& config, const FamilyDescription&) {
            return checkpoint_config(gpt2_config(config)).model;
          },
      .gguf = gpt2_gguf(),
  };
  return gpt2;
}

std::unique_ptr<Model> load_gpt2_checkpoint(std::span<const std::uint8_t> file,
                                            const Gpt2Config& config) {
  return load_checkpoint({file}, checkpoint_config(config));
}

}  // namespace attn
