// config.json read by the core (checkpoint_config.hpp) and how much of a .safetensors file's start
// its header needs (safetensors::head_bytes_needed): values, defaults, and each refusal's message.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/io/safetensors.hpp"
#include "attention/model/families/gpt2.hpp"
#include "attention/model/checkpoint_config.hpp"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::Equals;

namespace {

const std::string kGpt2 =
    R"({"model_type": "gpt2", "n_layer": 12, "n_head": 12, "n_embd": 768, "n_positions": 1024,
        "vocab_size": 50257, "n_inner": null, "layer_norm_epsilon": 1e-05,
        "activation_function": "gelu_new", "scale_attn_weights": true,
        "architectures": ["GPT2LMHeadModel"], "task_specific_params": {"text-generation": {}}})";

std::string message_of(const std::string& text) {
  try {
    attn::gpt2_config(attn::ConfigJson(text));
  } catch (const attn::Error& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("config.json: GPT-2's keys become a Gpt2Config; absent and null ones take GPT-2's values",
          "[checkpoint_config]") {
  const attn::Gpt2Config c = attn::gpt2_config(attn::ConfigJson(kGpt2));
  CHECK(c.model_type == "gpt2");
  CHECK(c.n_layer == 12);
  CHECK(c.n_head == 12);
  CHECK(c.n_embd == 768);
  CHECK(c.n_positions == 1024);
  CHECK(c.vocab_size == 50257);
  CHECK(c.n_inner == 0);
  CHECK(c.layer_norm_epsilon == 1e-5);
  CHECK(c.activation_function == "gelu_new");
  CHECK(c.scale_attn_weights);
  CHECK_FALSE(c.scale_attn_by_inverse_layer_idx);
  // Older configs name the context n_ctx; model_type absent means GPT-2.
  const attn::Gpt2Config old = attn::gpt2_config(attn::ConfigJson(
      R"({"n_layer": 2, "n_head": 2, "n_embd": 8, "n_ctx": 16, "vocab_size": 40})"));
  CHECK(old.model_type == "gpt2");
  CHECK(old.n_positions == 16);
  CHECK(old.activation_function == "gelu_new");
  // Another family is passed on by name (the import refuses it, naming it), whatever it lacks.
  CHECK(attn::gpt2_config(attn::ConfigJson(R"({"model_type": "llama", "hidden_size": 8})"))
            .model_type == "llama");
}

TEST_CASE("config.json: each wrong type or missing key is named", "[checkpoint_config]") {
  CHECK_THAT(message_of(R"({"n_head": 2, "n_embd": 8, "n_positions": 16, "vocab_size": 40})"),
             Equals("config.json has no n_layer; a GPT-2 config.json has n_layer, n_head, n_embd, "
                    "n_positions and vocab_size"));
  CHECK_THAT(message_of(R"({"n_layer": null, "n_head": 2})"), ContainsSubstring("has no n_layer"));
  CHECK_THAT(message_of(R"({"n_layer": 2.5})"),
             Equals("config.json's n_layer must be an integer from 0 to 4294967295, got 2.5"));
  CHECK_THAT(message_of(R"({"n_layer": -1})"), ContainsSubstring("got -1"));
  CHECK_THAT(message_of(R"({"n_layer": 4294967296})"), ContainsSubstring("got 4294967296"));
  CHECK_THAT(message_of(R"({"n_layer": "12"})"), ContainsSubstring(R"(got "12")"));
  CHECK_THAT(message_of(R"({"n_layer": [1, 2]})"), ContainsSubstring("got an array of length 2"));
  const std::string sizes =
      R"("n_layer": 2, "n_head": 2, "n_embd": 8, "n_positions": 16, "vocab_size": 40)";
  CHECK_THAT(message_of("{" + sizes + R"(, "layer_norm_epsilon": "small"})"),
             Equals(R"(config.json's layer_norm_epsilon must be a number, got "small")"));
  CHECK_THAT(message_of("{" + sizes + R"(, "scale_attn_weights": 1})"),
             Equals("config.json's scale_attn_weights must be true or false, got 1"));
  CHECK_THAT(message_of(R"({"model_type": 7})"),
             Equals("config.json's model_type must be a string, got 7"));
  CHECK_THAT(message_of(R"({"n_layer": ")" + std::string(50, 'x') + R"("})"),
             ContainsSubstring("got \"" + std::string(40, 'x') + "\xE2\x80\xA6\""));
  CHECK_THAT(message_of("[1]"), Equals("config.json must be a JSON object, got an array"));
  CHECK_THAT(message_of(R"({"n_layer": 2,})"),
             ContainsSubstring("config.json is not valid JSON at byte 14"));
  CHECK_THAT(message_of(R"({"n_layer": 2)"),
             ContainsSubstring("expected '}' but the config.json ended"));
  CHECK_THAT(message_of("{\"a\": \"\xC3\"}"), Equals("config.json is not valid UTF-8"));
}

TEST_CASE("head_bytes_needed: 8 + the header length, capped by the limit and the file",
          "[checkpoint_config]") {
  const std::vector<std::uint8_t> length_300{44, 1, 0, 0, 0, 0, 0, 0};  // 0x12C = 300
  CHECK(attn::safetensors::head_bytes_needed(length_300, 10000) == 308);
  CHECK(attn::safetensors::head_bytes_needed(length_300, 100) == 100);  // the file is shorter
  const std::vector<std::uint8_t> huge{0, 0, 0, 0, 0, 0, 0, 1};         // 2^56
  attn::safetensors::Limits limits;
  CHECK(attn::safetensors::head_bytes_needed(huge, std::uint64_t{1} << 40, limits) ==
        8 + limits.max_header_bytes + 1);
  const std::vector<std::uint8_t> short_file{1, 2, 3};
  CHECK(attn::safetensors::head_bytes_needed(short_file, 3) == 3);
}
