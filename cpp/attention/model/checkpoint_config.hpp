// A checkpoint's config.json read by the core: its family (model_type) and the keys that shape
// the model, each checked for its type with a message naming the key, every switch the core does
// not implement refused by name; the result is the family and the ModelConfig it describes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  // Whether the key is there with the value null (has() counts it as absent; a family whose
  // default differs from null — Gemma 2's soft-caps — tells them apart).
  bool is_null(std::string_view key) const;
  // A non-negative integer below 2^32; absent: throws `missing` as the message.
  std::size_t count(std::string_view key, const std::string& missing) const;
  std::size_t count_or(std::string_view key, std::size_t fallback) const;
  double number_or(std::string_view key, double fallback) const;
  bool boolean_or(std::string_view key, bool fallback) const;
  std::string string_or(std::string_view key, const std::string& fallback) const;
  // An integer id or a list of them (absent or null: none); entries that are not ids below
  // kMaxCheckpointVocab are skipped.
  std::vector<std::int32_t> ids_or_empty(std::string_view key) const;
  // An array of strings (absent or null: empty).
  std::vector<std::string> strings_or_empty(std::string_view key) const;
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

// A checkpoint's family, the model its config.json describes (ModelConfig::checkpoint set), and the
// ids that end a generation (config.json's eos_token_id).
struct CheckpointConfig {
  const FamilyDescription* family = nullptr;
  ModelConfig model;
  std::vector<std::int32_t> eos_ids;
};

// config.json for its family (model_type; absent: gpt2), read by the family's own reader
// (FamilyDescription::read_config). An unknown model_type, a value out of range or a switch the
// core does not implement throws attn::Error naming it.
CheckpointConfig checkpoint_config(const ConfigJson& config);

// What the families' readers share:
// validate() of a model a config.json describes, its message said as the checkpoint's ("this
// checkpoint is outside what a tab can load: …").
void validate_checkpoint(const ModelConfig& model);
// RoPE's θ per pair of the `rotary_dims` rotated columns under config.json's rope_scaling: none
// (absent, null or "default": empty) or the one type a family reads beside none, `supported`
// (RopeScaling::None: none at all); any other type refused by name (`family_note`, when given,
// ends the message, e.g. naming a family's own type).
std::vector<double> rope_scaling_frequencies(const ConfigJson& config, std::size_t rotary_dims,
                                             double base,
                                             RopeScaling supported = RopeScaling::Llama3,
                                             std::string_view family_note = "");
// `block` on every layer (set_uniform_blocks), the model validated as a checkpoint, then every
// layer's RoPE frequencies from rope_scaling_frequencies over `rotary_dims` columns at the block's
// base, and the scaling named when it applies: a family whose layers are all alike.
void set_uniform_rope_blocks(ModelConfig& model, const BlockConfig& block, const ConfigJson& config,
                             std::size_t rotary_dims, RopeScaling supported = RopeScaling::Llama3,
                             std::string_view family_note = "");
// eos_token_id: an id or a list of ids (absent or null: none); entries that are no id are skipped.
std::vector<std::int32_t> eos_ids(const ConfigJson& config);

}  // namespace attn
