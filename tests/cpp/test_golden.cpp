// The core against PyTorch's nn.MultiheadAttention: every case in tests/data/golden.
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

#include "approx.hpp"
#include "attention/layer/layer.hpp"
#include "test_support.hpp"

namespace {

struct GoldenRun {
  std::vector<float> output, attention, expected_output, expected_attention;
};

// Runs one golden case through a layer whose weights come from `weights_file` (the case file
// itself, or its PyTorch state_dict twin).
GoldenRun run_case(const std::string& name, bool load_state_dict_file) {
  const auto file = load_test_data("golden/" + name + ".safetensors");
  const auto& meta = file.metadata();
  const auto x = file.f32("x");
  attn::LayerConfig config;
  config.d_model = file.info("x").shape[1];
  config.heads = std::stoul(meta.at("heads"));
  config.bias = meta.at("bias") == "true";
  attn::AttentionLayer layer(config);
  if (load_state_dict_file) {
    layer.load_safetensors(
        read_file(std::string(ATTN_TEST_DATA_DIR) + "/golden/" + name + ".weights.safetensors"));
  } else {
    attn::LayerWeights weights;
    weights.in_proj_weight = file.f32("in_proj_weight");
    weights.out_proj_weight = file.f32("out_proj.weight");
    if (config.bias) {
      weights.in_proj_bias = file.f32("in_proj_bias");
      weights.out_proj_bias = file.f32("out_proj.bias");
    }
    layer.set_weights(weights);
  }
  attn::ForwardOptions options;
  options.n = file.info("x").shape[0];
  std::vector<float> kv;
  if (file.contains("kv")) {
    kv = file.f32("kv");
    options.cross = true;
    options.kv = kv;
    options.kv_n = file.info("kv").shape[0];
  }
  options.mask.kind = attn::parse_mask_kind(meta.at("mask"));
  if (file.contains("key_padding_mask")) options.mask.key_padding = file.u8("key_padding_mask");
  const auto& r = layer.forward(x, options);
  return {values(r.output), r.attention, file.f32("expected_output"),
          file.f32("expected_attention")};
}

}  // namespace

TEST_CASE("every PyTorch golden case matches to float32 precision", "[golden]") {
  const auto cases = data_cases("golden", ".weights.safetensors");
  REQUIRE(cases.size() >= 12);
  for (const auto& name : cases) {
    const auto run = run_case(name, false);
    require_close(run.output, run.expected_output, 2e-6, 2e-5, name + " output");
    require_close(run.attention, run.expected_attention, 1e-6, 2e-5, name + " attention");
  }
}

TEST_CASE("PyTorch state_dict files load by name and give the same answers", "[golden]") {
  for (const std::string name : {"self_bias", "self_nobias"}) {
    const auto run = run_case(name, true);
    require_close(run.output, run.expected_output, 2e-6, 2e-5, name + " output (state_dict)");
    require_close(run.attention, run.expected_attention, 1e-6, 2e-5, name + " attention");
  }
}
