// The weights module: lookup by state_dict name, reading and writing one layer's tensors under a
// name prefix; and the tests' own JSON-object-of-strings reader.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/layer/weights_file.hpp"
#include "attention/layer/layer.hpp"
#include "attention/layer/weights.hpp"
#include "test_support.hpp"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::Equals;

TEST_CASE("weight_by_name maps the six state_dict names and refuses any other", "[weights]") {
  attn::LayerConfig config;
  config.d_model = 8;
  config.heads = 2;
  const attn::AttentionLayer layer(config);
  const auto& w = layer.weights();
  REQUIRE(&attn::weight_by_name(w, "in_proj_weight") == &w.in_proj_weight);
  REQUIRE(&attn::weight_by_name(w, "in_proj_bias") == &w.in_proj_bias);
  REQUIRE(&attn::weight_by_name(w, "out_proj.weight") == &w.out_proj_weight);
  REQUIRE(&attn::weight_by_name(w, "out_proj.bias") == &w.out_proj_bias);
  REQUIRE(&attn::weight_by_name(w, "q_norm.weight") == &w.q_norm);
  REQUIRE(&attn::weight_by_name(w, "k_norm.weight") == &w.k_norm);
  REQUIRE_THROWS_WITH(attn::weight_by_name(w, "out_proj.weights"),
                      Equals("unknown weight 'out_proj.weights'; the weights are: in_proj_weight, "
                             "in_proj_bias, out_proj.weight, out_proj.bias, q_norm.weight, "
                             "k_norm.weight"));
  REQUIRE_THROWS_AS(attn::weight_by_name(w, ""), attn::Error);
}

TEST_CASE("one layer's tensors round-trip under a name prefix beside another layer's",
          "[weights]") {
  attn::LayerConfig config;
  config.d_model = 8;
  config.heads = 2;
  const attn::AttentionLayer first(config);
  config.seed = 7;
  const attn::AttentionLayer second(config);
  const attn::WeightShape shape = first.weight_shape();
  auto tensors = attn::layer_tensors(first.weights(), shape, "layers.0.attn.");
  for (auto& t : attn::layer_tensors(second.weights(), shape, "layers.1.attn.")) {
    tensors.push_back(std::move(t));
  }
  REQUIRE(tensors.front().name == "layers.0.attn.in_proj_weight");
  const auto bytes = attn::safetensors::write(tensors);
  const auto file = attn::safetensors::File::parse(bytes);
  const attn::LayerWeights zero = attn::read_layer_weights(file, shape, "layers.0.attn.");
  const attn::LayerWeights one = attn::read_layer_weights(file, shape, "layers.1.attn.");
  REQUIRE(zero.in_proj_weight == first.weights().in_proj_weight);
  REQUIRE(zero.out_proj_bias == first.weights().out_proj_bias);
  REQUIRE(one.in_proj_weight == second.weights().in_proj_weight);
  REQUIRE(one.out_proj_weight == second.weights().out_proj_weight);
  REQUIRE(one.in_proj_weight != zero.in_proj_weight);
  REQUIRE_THROWS_WITH(attn::read_layer_weights(file, shape, "layers.2.attn."),
                      ContainsSubstring("the weights file has no tensor "
                                        "'layers.2.attn.in_proj_weight'"));
  // Without a prefix every tensor of the file must be this layer's.
  REQUIRE_THROWS_WITH(attn::read_layer_weights(file, shape),
                      ContainsSubstring("unexpected tensor 'layers.0.attn.in_proj_weight'"));
}

TEST_CASE("a grouped-query layer's tensors: shapes, seeded init, magnitudes, round trip",
          "[weights][gqa]") {
  // Qwen2: q/k/v biases, no out_proj.bias
  attn::LayerConfig config{
      .d_model = 12, .heads = 4, .head_dim = 5, .kv_heads = 2, .out_bias = false};
  const attn::AttentionLayer layer(config);
  const attn::WeightShape shape = layer.weight_shape();
  REQUIRE(shape.inner == 20);
  REQUIRE(shape.kv_inner == 10);
  REQUIRE(shape.in_rows() == 40);
  const auto tensors = attn::weight_tensors(shape);
  REQUIRE(tensors.size() == 3);
  REQUIRE(std::string(tensors[0].name) == "in_proj_weight");
  REQUIRE(tensors[0].shape == std::vector<std::size_t>{40, 12});
  REQUIRE(std::string(tensors[1].name) == "in_proj_bias");
  REQUIRE(tensors[1].shape == std::vector<std::size_t>{40});
  REQUIRE(std::string(tensors[2].name) == "out_proj.weight");
  REQUIRE(tensors[2].shape == std::vector<std::size_t>{12, 20});
  const auto& w = layer.weights();
  REQUIRE(w.in_proj_weight.size() == 40 * 12);
  REQUIRE(w.in_proj_bias.size() == 40);
  REQUIRE(w.out_proj_bias.empty());
  // Xavier-uniform over fan_in + fan_out = 12 + 40.
  const float bound = float(std::sqrt(6.0 / 52.0));
  for (const float v : w.in_proj_weight) REQUIRE(std::abs(v) <= bound);

  // The magnitudes split in_proj at W_q's 20 rows and W_k's 10.
  attn::LayerWeights marked = w;
  marked.in_proj_weight[20 * 12] = 7.0f;   // W_k's first value
  marked.in_proj_weight[30 * 12] = -9.0f;  // W_v's first value
  marked.in_proj_bias[19] = 3.0f;          // b_q's last
  const attn::WeightMagnitudes m = attn::weight_magnitudes(attn::view_of(marked), shape);
  REQUIRE(m.k_weight == 7.0f);
  REQUIRE(m.v_weight == 9.0f);
  REQUIRE(m.q_weight < 1.0f);
  REQUIRE(m.q_bias == 3.0f);
  REQUIRE(m.k_bias < 1.0f);
  REQUIRE(m.out_bias == 0.0f);

  const auto bytes = attn::safetensors::write(attn::layer_tensors(w, shape, "layers.0.attn."));
  const auto file = attn::safetensors::File::parse(bytes);
  const attn::LayerWeights back = attn::read_layer_weights(file, shape, "layers.0.attn.");
  REQUIRE(back.in_proj_weight == w.in_proj_weight);
  REQUIRE(back.in_proj_bias == w.in_proj_bias);
  REQUIRE(back.out_proj_bias.empty());
  // A multi-head layer of the same sizes reads none of it: in_proj_weight is [60, 12] there.
  config.kv_heads = 0;
  config.out_bias.reset();
  const attn::AttentionLayer multi_head(config);
  REQUIRE_THROWS_WITH(attn::read_layer_weights(file, multi_head.weight_shape(), "layers.0.attn."),
                      ContainsSubstring("has shape [40, 12], expected [60, 12]"));
}

TEST_CASE("the tests' JSON reader reads flat objects of strings and refuses the rest",
          "[test-support]") {
  const auto map =
      parse_json_string_map("{ \"a\": \"x\", \"b.c\" :\"q\\\"\\\\ \\u00e9\\n\" ,\n \"e\": \"\" }");
  REQUIRE(map.size() == 3);
  REQUIRE(map.at("a") == "x");
  REQUIRE(map.at("b.c") == "q\"\\ \xC3\xA9\n");
  REQUIRE(map.at("e").empty());
  REQUIRE(parse_json_string_map(" {} ").empty());
  REQUIRE_THROWS_AS(parse_json_string_map("{\"a\": 1}"), std::runtime_error);
  REQUIRE_THROWS_AS(parse_json_string_map("{\"a\": \"x\",}"), std::runtime_error);
  REQUIRE_THROWS_AS(parse_json_string_map("{\"a\": \"x\"} x"), std::runtime_error);
  REQUIRE_THROWS_AS(parse_json_string_map("{\"a\": \"x\", \"a\": \"y\"}"), std::runtime_error);
  REQUIRE_THROWS_AS(parse_json_string_map("{\"a\": \"\\x\"}"), std::runtime_error);
  REQUIRE_THROWS_AS(parse_json_string_map("{\"a\": \"x"), std::runtime_error);
}
