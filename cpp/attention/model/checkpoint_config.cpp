// Reading config.json (checkpoint_config.hpp): typed members with messages naming the key.
#include "attention/model/checkpoint_config.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "attention/error.hpp"
#include "attention/model/family.hpp"
#include "attention/text/utf8.hpp"

namespace attn {

namespace {

constexpr std::uint64_t kMaxCount = 0xffffffffu;
constexpr std::size_t kMaxQuoted = 40;

// A JSON value as the JS API describes one: 5, "text" (cut at 40 characters), true, null, an
// object, an array of length N.
std::string describe(const json::Value& value) {
  if (value.is_null()) return "null";
  if (const bool* flag = value.boolean()) return *flag ? "true" : "false";
  if (const json::Number* number = value.number()) return number->text;
  if (const json::Array* array = value.array()) {
    return "an array of length " + std::to_string(array->size());
  }
  if (const std::string* text = value.string()) {
    const std::u32string characters = decode_utf8_replacing(*text);
    std::string shown;
    for (std::size_t i = 0; i < characters.size() && i < kMaxQuoted; ++i) {
      if (characters[i] == U'"' || characters[i] == U'\\') shown += '\\';
      append_utf8(shown, characters[i]);
    }
    if (characters.size() > kMaxQuoted) shown += "\xE2\x80\xA6";  // …
    return "\"" + shown + "\"";
  }
  return "an object";
}

}  // namespace

void ConfigJson::wrong_type(std::string_view key, const char* expected,
                            const json::Value& value) const {
  throw Error(name(key) + " must be " + expected + ", got " + describe(value));
}

std::string ConfigJson::name(std::string_view key) const {
  return "config.json's " + prefix_ + std::string(key);
}

ConfigJson::ConfigJson(const json::Value& object, std::string prefix)
    : root_(object), prefix_(std::move(prefix)) {}

std::optional<ConfigJson> ConfigJson::object(std::string_view key) const {
  const json::Value* value = member(key);
  if (value == nullptr) return std::nullopt;
  if (value->object() == nullptr) wrong_type(key, "an object", *value);
  return ConfigJson(*value, prefix_ + std::string(key) + ".");
}

ConfigJson::ConfigJson(std::string_view text) {
  if (first_invalid_utf8(text) != std::string_view::npos) {
    throw Error("config.json is not valid UTF-8");
  }
  root_ = json::parse(text, {"config.json is not valid JSON", "config.json"});
  if (root_.object() == nullptr) {
    throw Error(std::string("config.json must be a JSON object, got ") + json::kind_name(root_));
  }
}

const json::Value* ConfigJson::member(std::string_view key) const {
  const json::Value* value = json::find(*root_.object(), key);
  return value == nullptr || value->is_null() ? nullptr : value;
}

bool ConfigJson::has(std::string_view key) const {
  return member(key) != nullptr;
}

std::size_t ConfigJson::count(std::string_view key, const std::string& missing) const {
  const json::Value* value = member(key);
  if (value == nullptr) throw Error(missing);
  const json::Number* number = value->number();
  if (number == nullptr || !number->exact || (number->negative && number->magnitude != 0) ||
      number->magnitude > kMaxCount) {
    wrong_type(key, "an integer from 0 to 4294967295", *value);
  }
  return static_cast<std::size_t>(number->magnitude);
}

std::size_t ConfigJson::count_or(std::string_view key, std::size_t fallback) const {
  return has(key) ? count(key, "") : fallback;
}

double ConfigJson::number_or(std::string_view key, double fallback) const {
  const json::Value* value = member(key);
  if (value == nullptr) return fallback;
  if (value->number() == nullptr) wrong_type(key, "a number", *value);
  return value->number()->value();
}

bool ConfigJson::boolean_or(std::string_view key, bool fallback) const {
  const json::Value* value = member(key);
  if (value == nullptr) return fallback;
  if (value->boolean() == nullptr) wrong_type(key, "true or false", *value);
  return *value->boolean();
}

std::string ConfigJson::string_or(std::string_view key, const std::string& fallback) const {
  const json::Value* value = member(key);
  if (value == nullptr) return fallback;
  if (value->string() == nullptr) wrong_type(key, "a string", *value);
  return *value->string();
}

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

namespace {

std::string str(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// validate(), its message said as the checkpoint's.
void validate_checkpoint(const ModelConfig& model) {
  try {
    validate(model);
  } catch (const Error& error) {
    throw Error(std::string("this checkpoint is outside what a tab can load: ") + error.what());
  }
}

// Llama 3's rope_scaling, or none ("default"); any other type refused by name.
std::vector<double> rope_frequencies(const ConfigJson& config, std::size_t head_dim, double base) {
  const std::optional<ConfigJson> scaling = config.object("rope_scaling");
  if (!scaling) return {};
  const std::string type = scaling->string_or("rope_type", scaling->string_or("type", ""));
  if (type == "default") return {};
  if (type != "llama3") {
    throw Error("config.json's rope_scaling has type '" + type.substr(0, 40) +
                "'; supported: none (null or 'default') and 'llama3' (Llama 3.1 and 3.2)");
  }
  Llama3RopeScaling llama3;
  const auto positive = [&](std::string_view key, double fallback) {
    const double value = scaling->number_or(key, fallback);
    if (!(value > 0.0 && std::isfinite(value))) {
      throw Error(scaling->name(key) + " must be a positive number, got " + str(value));
    }
    return value;
  };
  llama3.factor = positive("factor", 0.0);
  llama3.low_freq_factor = positive("low_freq_factor", 0.0);
  llama3.high_freq_factor = positive("high_freq_factor", 0.0);
  llama3.original_context = double(scaling->count(
      "original_max_position_embeddings", scaling->name("original_max_position_embeddings") +
                                              " is missing (Llama 3's scaling needs it)"));
  if (!(llama3.high_freq_factor > llama3.low_freq_factor)) {
    throw Error(scaling->name("high_freq_factor") + " must be above low_freq_factor, got " +
                str(llama3.high_freq_factor) + " and " + str(llama3.low_freq_factor));
  }
  return llama3_rope_frequencies(head_dim, base, llama3);
}

// llama, qwen2 and mistral: transformers' LlamaConfig, Qwen2Config and MistralConfig keys.
CheckpointConfig llama_family_config(const ConfigJson& config, const FamilyDescription& family) {
  const FamilySizeKeys& keys = family.size_keys;
  const auto required = [&](std::string_view key) {
    return config.count(key, "config.json has no " + std::string(key) + "; a " +
                                 std::string(family.display_name) +
                                 " config.json has hidden_size, num_hidden_layers, "
                                 "num_attention_heads, intermediate_size, vocab_size and "
                                 "max_position_embeddings");
  };
  ModelConfig m;
  m.checkpoint = true;
  m.seed = 0;  // nothing is drawn: every parameter comes from the file
  m.d_model = required(keys.d_model);
  m.layers = required(keys.layers);
  m.heads = required(keys.heads);
  m.mlp_width = required("intermediate_size");
  m.vocab = required(keys.vocab);
  m.context = required(keys.context);
  m.kv_heads = config.count_or("num_key_value_heads", m.heads);
  m.head_dim = config.count_or("head_dim", 0);
  const auto positive = [&](const char* key, std::size_t value) {
    if (value == 0) throw Error("config.json needs a positive " + std::string(key) + ", got 0");
  };
  positive("hidden_size", m.d_model);
  positive("num_hidden_layers", m.layers);
  positive("num_attention_heads", m.heads);
  positive("num_key_value_heads", m.kv_heads);
  positive("intermediate_size", m.mlp_width);
  positive("vocab_size", m.vocab);
  positive("max_position_embeddings", m.context);
  const std::string act = config.string_or("hidden_act", "silu");
  if (act != "silu") {
    throw Error("config.json's hidden_act is '" + act.substr(0, 40) +
                "'; supported: silu (SwiGLU, as every " + std::string(family.display_name) +
                " checkpoint has)");
  }
  m.positional = PositionalKind::Rope;
  m.norm = NormKind::RmsNorm;
  m.norm_eps = config.number_or("rms_norm_eps", 1e-6);
  m.tied = config.boolean_or("tie_word_embeddings", false);
  BlockConfig block;
  block.mlp = MlpKind::Gated;
  block.activation = Activation::Silu;
  block.rope.pairing = RopePairing::RotateHalf;
  block.rope.base = config.number_or("rope_theta", 10000.0);
  if (config.number_or("partial_rotary_factor", 1.0) != 1.0) {
    throw Error("config.json's partial_rotary_factor is " +
                str(config.number_or("partial_rotary_factor", 1.0)) +
                "; supported: 1 (RoPE on every dimension of a head)");
  }
  if (family.family == "llama") {
    const bool attention_bias = config.boolean_or("attention_bias", false);
    m.bias = {attention_bias, attention_bias, config.boolean_or("mlp_bias", false)};
  } else if (family.family == "qwen2") {
    m.bias = {true, false, false};  // Qwen2's q/k/v projections always have biases
    if (config.boolean_or("use_sliding_window", false)) {
      throw Error(
          "config.json has use_sliding_window true (Qwen2's sliding window on the layers "
          "from max_window_layers on); supported: false");
    }
  } else if (family.family == "mistral") {
    m.bias = {false, false, false};
    block.window = config.count_or("sliding_window", 0);
  }
  set_uniform_blocks(m, block);
  if (m.heads != 0 && m.d_model % m.heads != 0 && m.head_dim == 0) {
    throw Error("config.json's hidden_size " + std::to_string(m.d_model) +
                " is not divisible by num_attention_heads " + std::to_string(m.heads) +
                " (and there is no head_dim)");
  }
  validate_checkpoint(m);
  const std::vector<double> frequencies =
      rope_frequencies(config, m.head_dim ? m.head_dim : m.d_model / m.heads, block.rope.base);
  for (BlockConfig& each : m.blocks) each.rope.frequencies = frequencies;
  return {&family, m};
}

}  // namespace

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
  return {&family, m};
}

CheckpointConfig checkpoint_config(const ConfigJson& config) {
  const std::string model_type = config.string_or("model_type", "gpt2");
  const FamilyDescription* family = family_of_model_type(model_type);
  if (family == nullptr) {
    std::string known;
    for (const FamilyDescription* each : families()) {
      known += (known.empty() ? "" : ", ") + std::string(each->model_type);
    }
    throw Error("config.json has model_type '" + model_type.substr(0, 40) +
                "'; supported: " + known);
  }
  if (family == &gpt2_family()) return checkpoint_config(gpt2_config(config));
  return llama_family_config(config, *family);
}

}  // namespace attn
