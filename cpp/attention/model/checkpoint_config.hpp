// A checkpoint's config.json read by the core: its family (model_type) and the keys that shape
// the model, each checked for its type with a message naming the key, every switch the core does
// not implement refused by name; the result is the family and the ModelConfig it describes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "attention/io/json.hpp"
#include "attention/model/family.hpp"
#include "attention/model/model.hpp"

namespace attn {

// config.json's members read by name: every accessor throws attn::Error saying
// "config.json's <key> must be …, got <value>" for a wrong type. A null counts as absent.
class ConfigJson {
 public:
  // An object member of another ConfigJson (e.g. rope_scaling), its messages naming
  // "<parent>.<key>".
  ConfigJson(const json::Value& object, std::string prefix);
  // Parses config.json's text (invalid JSON or anything but an object throws, naming it).
  explicit ConfigJson(std::string_view text);

  bool has(std::string_view key) const;
  // A non-negative integer below 2^32; absent: throws `missing` as the message.
  std::size_t count(std::string_view key, const std::string& missing) const;
  std::size_t count_or(std::string_view key, std::size_t fallback) const;
  double number_or(std::string_view key, double fallback) const;
  bool boolean_or(std::string_view key, bool fallback) const;
  std::string string_or(std::string_view key, const std::string& fallback) const;
  // An object member (absent or null: nothing).
  std::optional<ConfigJson> object(std::string_view key) const;
  // "config.json's <key>" (or "config.json's <parent>.<key>").
  std::string name(std::string_view key) const;

 private:
  const json::Value* member(std::string_view key) const;  // nullptr when absent or null
  [[noreturn]] void wrong_type(std::string_view key, const char* expected,
                               const json::Value& value) const;
  json::Value root_;
  std::string prefix_;  // "" or "rope_scaling."
};

// GPT-2's config.json fields that shape the model (absent: the defaults, which are GPT-2's own).
struct Gpt2Config {
  std::string model_type = "gpt2";  // anything else is refused, naming it
  std::size_t n_layer = 0;
  std::size_t n_head = 0;
  std::size_t n_embd = 0;
  std::size_t n_positions = 0;
  std::size_t vocab_size = 0;
  std::size_t n_inner = 0;  // 0: null in config.json, i.e. 4·n_embd (the only width supported)
  double layer_norm_epsilon = 1e-5;
  std::string activation_function = "gelu_new";  // gelu_new | gelu_pytorch_tanh | gelu
  bool scale_attn_weights = true;                // scores / √d_k (false is not supported)
  bool scale_attn_by_inverse_layer_idx = false;  // true is not supported
};

// A checkpoint's family and the model its config.json describes (ModelConfig::checkpoint set).
struct CheckpointConfig {
  const FamilyDescription* family = nullptr;
  ModelConfig model;
};

// config.json for its family (model_type; absent: gpt2). An unknown model_type, a value out of
// range or a switch the core does not implement throws attn::Error naming it.
CheckpointConfig checkpoint_config(const ConfigJson& config);
// GPT-2's fields checked and turned into a model.
CheckpointConfig checkpoint_config(const Gpt2Config& config);

// GPT-2's keys: n_layer, n_head, n_embd, n_positions (or n_ctx), vocab_size are required;
// model_type defaults to "gpt2", the rest to GPT-2's own values (Gpt2Config's defaults).
Gpt2Config gpt2_config(const ConfigJson& config);

}  // namespace attn
