// Reading config.json (checkpoint_config.hpp): typed members with messages naming the key.
#include "attention/model/checkpoint_config.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "attention/error.hpp"
#include "attention/message_text.hpp"
#include "attention/model/family.hpp"
#include "attention/utf8.hpp"

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

bool ConfigJson::is_null(std::string_view key) const {
  const json::Value* value = json::find(*root_.object(), key);
  return value != nullptr && value->is_null();
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

std::vector<std::string> ConfigJson::strings_or_empty(std::string_view key) const {
  const json::Value* value = member(key);
  if (value == nullptr) return {};
  const json::Array* array = value->array();
  if (array == nullptr) wrong_type(key, "an array of strings", *value);
  std::vector<std::string> out;
  for (const json::Value& item : *array) {
    if (item.string() == nullptr) wrong_type(key, "an array of strings", *value);
    out.push_back(*item.string());
  }
  return out;
}

std::vector<std::int32_t> ConfigJson::ids_or_empty(std::string_view key) const {
  const json::Value* value = member(key);
  if (value == nullptr) return {};
  std::vector<const json::Value*> items;
  if (const json::Array* array = value->array()) {
    for (const json::Value& item : *array) items.push_back(&item);
  } else {
    items.push_back(value);
  }
  std::vector<std::int32_t> ids;
  for (const json::Value* item : items) {
    const json::Number* number = item->number();
    // An id the vocabulary could hold (a checkpoint's ids are below kMaxCheckpointVocab);
    // anything else (null, a negative or fractional number, a string) is no id.
    if (number != nullptr && number->exact && (!number->negative || number->magnitude == 0) &&
        number->magnitude < kMaxCheckpointVocab) {
      ids.push_back(std::int32_t(number->magnitude));
    }
  }
  return ids;
}

// validate(), its message said as the checkpoint's.
void validate_checkpoint(const ModelConfig& model) {
  try {
    validate(model);
  } catch (const Error& error) {
    throw Error(std::string("this checkpoint is outside what a tab can load: ") + error.what());
  }
}

// Llama 3's or linear rope_scaling, as the family supports, or none ("default"); any other type
// refused by name.
std::vector<double> rope_scaling_frequencies(const ConfigJson& config, std::size_t rotary_dims,
                                             double base, RopeScaling supported,
                                             std::string_view family_note) {
  const std::size_t head_dim = rotary_dims;
  const std::optional<ConfigJson> scaling = config.object("rope_scaling");
  if (!scaling) return {};
  const std::string type = scaling->string_or("rope_type", scaling->string_or("type", ""));
  if (type == "default") return {};
  const char* wanted = supported == RopeScaling::Llama3   ? "llama3"
                       : supported == RopeScaling::Linear ? "linear"
                                                          : "";
  if (type != wanted || supported == RopeScaling::None) {
    const std::string also = supported == RopeScaling::Llama3 ? " and 'llama3' (Llama 3.1 and 3.2)"
                             : supported == RopeScaling::Linear ? " and 'linear'"
                                                                : "";
    throw Error("config.json's rope_scaling has type '" + type.substr(0, 40) +
                "'; supported: none (null or 'default')" + also +
                (family_note.empty() ? "" : "; " + std::string(family_note)));
  }
  const auto positive = [&](std::string_view key, double fallback) {
    const double value = scaling->number_or(key, fallback);
    if (!(value > 0.0 && std::isfinite(value))) {
      throw Error(scaling->name(key) + " must be a positive number, got " + number_text(value));
    }
    return value;
  };
  if (supported == RopeScaling::Linear) {  // θ_i / factor on every pair
    const double factor = positive("factor", 0.0);
    std::vector<double> frequencies(rotary_dims / 2);
    for (std::size_t i = 0; i < frequencies.size(); ++i) {
      frequencies[i] = rope_frequency(i, rotary_dims, base) / factor;
    }
    return frequencies;
  }
  Llama3RopeScaling llama3;
  llama3.factor = positive("factor", 0.0);
  llama3.low_freq_factor = positive("low_freq_factor", 0.0);
  llama3.high_freq_factor = positive("high_freq_factor", 0.0);
  llama3.original_context = double(scaling->count(
      "original_max_position_embeddings", scaling->name("original_max_position_embeddings") +
                                              " is missing (Llama 3's scaling needs it)"));
  if (!(llama3.high_freq_factor > llama3.low_freq_factor)) {
    throw Error(scaling->name("high_freq_factor") + " must be above low_freq_factor, got " +
                number_text(llama3.high_freq_factor) + " and " +
                number_text(llama3.low_freq_factor));
  }
  return llama3_rope_frequencies(head_dim, base, llama3);
}

void set_uniform_rope_blocks(ModelConfig& model, const BlockConfig& block, const ConfigJson& config,
                             std::size_t rotary_dims, RopeScaling supported,
                             std::string_view family_note) {
  set_uniform_blocks(model, block);
  validate_checkpoint(model);
  const std::vector<double> frequencies =
      rope_scaling_frequencies(config, rotary_dims, block.rope.base, supported, family_note);
  for (BlockConfig& each : model.blocks) {
    each.rope.frequencies = frequencies;
    if (!frequencies.empty()) each.rope.scaling = supported;
  }
}

std::vector<std::int32_t> eos_ids(const ConfigJson& config) {
  return config.ids_or_empty("eos_token_id");
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
  return {family, family->read_config(config, *family), eos_ids(config)};
}

}  // namespace attn
