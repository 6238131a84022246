// A checkpoint's config.json read by the core: its family (model_type) and the keys that shape
// the model, each checked for its type with a message naming the key (the values' ranges are
// the family's import's to check).
#pragma once

#include <string>
#include <string_view>

#include "attention/io/json.hpp"
#include "attention/model/gpt2_checkpoint.hpp"

namespace attn {

// config.json's members read by name: every accessor throws attn::Error saying
// "config.json's <key> must be …, got <value>" for a wrong type. A null counts as absent.
class ConfigJson {
 public:
  // Parses config.json's text (invalid JSON or anything but an object throws, naming it).
  explicit ConfigJson(std::string_view text);

  bool has(std::string_view key) const;
  // A non-negative integer below 2^32; absent: throws `missing` as the message.
  std::size_t count(std::string_view key, const std::string& missing) const;
  std::size_t count_or(std::string_view key, std::size_t fallback) const;
  double number_or(std::string_view key, double fallback) const;
  bool boolean_or(std::string_view key, bool fallback) const;
  std::string string_or(std::string_view key, const std::string& fallback) const;

 private:
  const json::Value* member(std::string_view key) const;  // nullptr when absent or null
  json::Value root_;
};

// GPT-2's keys: n_layer, n_head, n_embd, n_positions (or n_ctx), vocab_size are required;
// model_type defaults to "gpt2", the rest to GPT-2's own values (Gpt2Config's defaults).
Gpt2Config gpt2_config(const ConfigJson& config);

}  // namespace attn
