// The malformed .safetensors corpus (tests/data/malformed/, written by
// scripts/data/make-malformed-corpus.mjs): every file gives the message expected.json lists for it,
// natively (and under ASan/UBSan in the native-debug build). tests/js/malformed.test.mjs checks
// the same files through the wasm module; the fuzz suite starts from them.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>
#include <set>
#include <string>

#include "attention/error.hpp"
#include "attention/io/safetensors.hpp"
#include "attention/layer/layer.hpp"
#include "test_support.hpp"

using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;

namespace {

const std::string kMalformedDir = std::string(ATTN_TEST_DATA_DIR) + "/malformed/";
const std::string kSeedDir = std::string(ATTN_TEST_DATA_DIR) + "/../fuzz/seeds/";

// The layer every corpus file is meant for (tests/data/malformed/README.md).
attn::LayerConfig corpus_layer() {
  attn::LayerConfig config;
  config.d_model = 4;
  config.heads = 2;
  config.bias = true;
  return config;
}

std::set<std::string> safetensors_names_in(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".safetensors") names.insert(entry.path().filename().string());
  }
  return names;
}

bool is_layer_level(const std::string& name) {
  return name.rfind("layer-", 0) == 0;
}

}  // namespace

TEST_CASE("expected.json lists exactly the files of tests/data/malformed/", "[malformed]") {
  const auto expected = read_json_string_map(kMalformedDir + "expected.json");
  std::set<std::string> listed;
  for (const auto& [name, message] : expected) {
    listed.insert(name);
    CHECK_FALSE(message.empty());
  }
  CHECK(listed == safetensors_names_in(kMalformedDir));
  CHECK(listed.size() >= 50);
}

TEST_CASE("every malformed file is refused by load_safetensors with its expected message",
          "[malformed]") {
  attn::AttentionLayer layer(corpus_layer());
  const attn::LayerWeights before = layer.weights();
  for (const auto& [name, message] : read_json_string_map(kMalformedDir + "expected.json")) {
    INFO(name << ": expected \"" << message << "\"");
    CHECK_THROWS_WITH(layer.load_safetensors(read_file(kMalformedDir + name)),
                      ContainsSubstring(message));
  }
  // Every refusal left the weights as they were.
  CHECK(layer.weights().in_proj_weight == before.in_proj_weight);
  CHECK(layer.weights().in_proj_bias == before.in_proj_bias);
  CHECK(layer.weights().out_proj_weight == before.out_proj_weight);
  CHECK(layer.weights().out_proj_bias == before.out_proj_bias);
}

TEST_CASE("reader-level files fail in File::parse; layer-level ones parse", "[malformed]") {
  for (const auto& [name, message] : read_json_string_map(kMalformedDir + "expected.json")) {
    INFO(name);
    const auto bytes = read_file(kMalformedDir + name);
    if (is_layer_level(name)) {
      CHECK_NOTHROW(attn::safetensors::File::parse(bytes));
    } else {
      CHECK_THROWS_WITH(attn::safetensors::File::parse(bytes),
                        ContainsSubstring("safetensors: ") && ContainsSubstring(message));
    }
  }
}

TEST_CASE("the valid seeds the corpus was cut from load", "[malformed]") {
  const auto seeds = safetensors_names_in(kSeedDir);
  REQUIRE(seeds.size() >= 2);
  for (const std::string& name : seeds) {
    INFO(name);
    const auto bytes = read_file(kSeedDir + name);
    const auto file = attn::safetensors::File::parse(bytes);
    attn::LayerConfig config;
    config.d_model = file.info("in_proj_weight").shape.at(1);
    config.heads = 1;
    config.bias = file.contains("in_proj_bias");
    attn::AttentionLayer layer(config);
    layer.load_safetensors(bytes);
    CHECK(layer.weights().in_proj_weight == file.f32("in_proj_weight"));
  }
}
