// The weights module: lookup by state_dict name, reading and writing one layer's tensors under a
// name prefix; and the tests' own JSON-object-of-strings reader.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <stdexcept>

#include "attention/error.hpp"
#include "attention/io/weights_io.hpp"
#include "attention/layer/layer.hpp"
#include "attention/layer/weights.hpp"
#include "test_support.hpp"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::Equals;

TEST_CASE("weight_by_name maps the four state_dict names and refuses any other", "[weights]") {
  attn::LayerConfig config;
  config.d_model = 8;
  config.heads = 2;
  const attn::AttentionLayer layer(config);
  const auto& w = layer.weights();
  REQUIRE(&attn::weight_by_name(w, "in_proj_weight") == &w.in_proj_weight);
  REQUIRE(&attn::weight_by_name(w, "in_proj_bias") == &w.in_proj_bias);
  REQUIRE(&attn::weight_by_name(w, "out_proj.weight") == &w.out_proj_weight);
  REQUIRE(&attn::weight_by_name(w, "out_proj.bias") == &w.out_proj_bias);
  REQUIRE_THROWS_WITH(attn::weight_by_name(w, "out_proj.weights"),
                      Equals("unknown weight 'out_proj.weights'; the weights are: in_proj_weight, "
                             "in_proj_bias, out_proj.weight, out_proj.bias"));
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
