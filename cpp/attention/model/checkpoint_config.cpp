// Reading config.json (checkpoint_config.hpp): typed members with messages naming the key.
#include "attention/model/checkpoint_config.hpp"

#include <cstdint>

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

[[noreturn]] void wrong_type(std::string_view key, const char* expected, const json::Value& value) {
  throw Error("config.json's " + std::string(key) + " must be " + expected + ", got " +
              describe(value));
}

}  // namespace

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

}  // namespace attn
