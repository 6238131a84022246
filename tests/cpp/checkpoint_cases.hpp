// The checkpoint cases of a tests/data folder (llama/, families/: <case>.config.json,
// <case>.safetensors, <case>.expected.safetensors from the make-*-golden.py scripts): a case's
// config.json as text or read by the core, its checkpoint loaded, config.json with one key edited
// (for the refused-switch tests, listed in the folder's refusals.json), the sizes the expected
// file's metadata names checked, and the walkthrough's traced layers checked against the forward.
#pragma once

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attention/io/json.hpp"
#include "attention/model/checkpoint_import.hpp"
#include "test_support.hpp"

// config.json's text read by the core.
inline attn::CheckpointConfig config_of(const std::string& text) {
  return attn::checkpoint_config(attn::ConfigJson(text));
}

// config.json's text with `key`'s value replaced by `value` (JSON text), or added.
inline std::string with_key_in(std::string text, const std::string& key, const std::string& value) {
  const std::string quoted = "\"" + key + "\": ";
  const auto at = text.find(quoted);
  if (at == std::string::npos) return "{" + quoted + value + "," + text.substr(text.find('{') + 1);
  std::size_t end = at + quoted.size();
  int depth = 0;
  for (; end < text.size(); ++end) {
    const char c = text[end];
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') {
      if (depth == 0) break;
      --depth;
    }
    if (c == ',' && depth == 0) break;
  }
  return text.substr(0, at + quoted.size()) + value + text.substr(end);
}

// One folder's cases, e.g. CheckpointCases{"llama"}.
struct CheckpointCases {
  std::string folder;

  // A file of the folder, e.g. path("llama-f32.safetensors").
  std::string path(const std::string& file) const {
    return std::string(ATTN_TEST_DATA_DIR) + "/" + folder + "/" + file;
  }
  std::string config_text(const std::string& name) const {
    const auto bytes = read_file(path(name + ".config.json"));
    return std::string(bytes.begin(), bytes.end());
  }
  // The case's checkpoint: its .safetensors file's bytes, and read into a Model by its
  // config.json.
  std::vector<std::uint8_t> checkpoint_bytes(const std::string& name) const {
    return read_file(path(name + ".safetensors"));
  }
  std::unique_ptr<attn::Model> load(const std::string& name) const {
    return attn::load_checkpoint({checkpoint_bytes(name)}, config_of(config_text(name)));
  }
  // The case's config.json with `key`'s value replaced by `value` (JSON text), or added.
  std::string with_key(const std::string& name, const std::string& key,
                       const std::string& value) const {
    return with_key_in(config_text(name), key, value);
  }
  // The case's config.json with `key` set to `value` refused by the core, the message containing
  // `message`.
  void refuses(const std::string& name, const std::string& key, const std::string& value,
               const std::string& message) const {
    const std::string text = with_key(name, key, value);
    INFO(text.substr(0, 160));
    CHECK_THROWS_WITH(config_of(text), Catch::Matchers::ContainsSubstring(message));
  }
  // Every entry of the folder's refusals.json ({case, key, value, message}: the switches the
  // core does not implement, also checked through the JS API) refused as refuses() says.
  void refuses_listed() const {
    const auto bytes = read_file(path("refusals.json"));
    const attn::json::Value doc = attn::json::parse(std::string(bytes.begin(), bytes.end()));
    const attn::json::Value* list = attn::json::find(*doc.object(), "refusals");
    REQUIRE(list != nullptr);
    REQUIRE(list->array()->size() >= 10);
    for (const attn::json::Value& entry : *list->array()) {
      const auto field = [&](const char* key) {
        return *attn::json::find(*entry.object(), key)->string();
      };
      refuses(field("case"), field("key"), field("value"), field("message"));
    }
  }
  // PyTorch's run of the case (make-*-golden.py): ids, logits and attention, sizes as metadata.
  attn::safetensors::File expected(const std::string& name) const {
    return load_test_data(folder + "/" + name + ".expected.safetensors");
  }
};

// A loaded case's family and sizes as its expected file's metadata names them.
inline void check_sizes_as_in(const std::map<std::string, std::string>& meta,
                              const attn::CheckpointConfig& checkpoint,
                              const attn::ModelConfig& config) {
  const auto number = [&](const char* key) { return std::stoul(meta.at(key)); };
  const attn::AttentionShape shape = attn::attention_shape(config);
  CHECK(checkpoint.family->family == meta.at("family"));
  CHECK(config.layers == number("layers"));
  CHECK(shape.heads == number("heads"));
  CHECK(shape.kv_heads == number("kv_heads"));
  CHECK(shape.head_dim == number("head_dim"));
  CHECK(config.d_model == number("d_model"));
  CHECK(config.vocab == number("vocab"));
}

// `ids` traced through a checkpoint's model and run by its forward: every layer's traced
// attention weights (one Weights step per head) equal the forward's attention within 2e-6.
inline void check_traced_weights_match_forward(attn::Model& model,
                                               const std::vector<std::int32_t>& ids) {
  const std::size_t n = ids.size();
  model.trace(ids, n);
  const auto out = model.forward(ids, 1, n);
  const attn::AttentionShape shape = attn::attention_shape(model.config());
  for (std::size_t l = 0; l < model.config().layers; ++l) {
    INFO("layer " << l);
    std::size_t heads_seen = 0;
    for (const auto& step : model.traced_layer(l).last_result().trace.steps) {
      if (step.kind != attn::StepKind::Weights) continue;
      ++heads_seen;
      const float* want = out.attention[l].data() + std::size_t(step.head) * n * n;
      for (std::size_t i = 0; i < n * n; ++i) CHECK(std::abs(step.data[i] - want[i]) < 2e-6f);
    }
    CHECK(heads_seen == shape.heads);
  }
}
