// GPT-2 checkpoints read into a Model: PyTorch golden data (tests/data/gpt2, from
// scripts/data/make-gpt2-golden.py), F16/BF16 twins, and every refused file's message.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "attention/error.hpp"
#include "attention/model/families/gpt2.hpp"
#include "attention/model/checkpoint_import.hpp"
#include "test_support.hpp"

namespace st = attn::safetensors;
using Catch::Matchers::ContainsSubstring;

namespace {

attn::Gpt2Config config_of(const st::File& expected) {
  const auto number = [&](const char* key) { return std::stoul(expected.metadata().at(key)); };
  attn::Gpt2Config config;
  config.n_layer = number("layers");
  config.n_head = number("heads");
  config.n_embd = number("d_model");
  config.vocab_size = number("vocab");
  config.n_positions = number("context");
  return config;
}

std::vector<std::uint8_t> checkpoint_bytes(const std::string& name) {
  return read_file(std::string(ATTN_TEST_DATA_DIR) + "/gpt2/" + name + ".safetensors");
}

// tiny-f32's tensors, renamed / reshaped / dropped by `edit`, written back.
template <class Edit>
std::vector<std::uint8_t> edited_tiny(Edit edit) {
  return edited_safetensors(checkpoint_bytes("tiny-f32"), edit);
}

// tiny-f32 with the tensor `from` renamed `to`.
std::vector<std::uint8_t> renamed_tiny(const std::string& from, const std::string& to) {
  return edited_tiny([&](st::TensorToWrite& t) {
    if (t.name == from) t.name = to;
    return true;
  });
}

attn::Gpt2Config tiny_config() {
  return {.n_layer = 2, .n_head = 2, .n_embd = 32, .n_positions = 32, .vocab_size = 64};
}

}  // namespace

TEST_CASE("GPT-2 checkpoints match PyTorch's GPT-2 to float32 precision", "[gpt2]") {
  for (const char* name : {"tiny-f32", "tiny-f16", "bare-f32", "bare-bf16"}) {
    INFO(name);
    const auto expected = load_test_data(std::string("gpt2/") + name + ".expected.safetensors");
    const auto model = attn::load_gpt2_checkpoint(checkpoint_bytes(name), config_of(expected));
    const auto& config = model->config();
    CHECK(config.tied);
    CHECK(config.blocks[0].activation == attn::Activation::GeluTanh);
    require_golden_forward(*model, expected);
  }
}

TEST_CASE("an F16 or BF16 checkpoint holds its F32 twin's weights rounded", "[gpt2]") {
  for (const auto& [low, high, bits] :
       {std::tuple{"tiny-f16", "tiny-f32", 11}, std::tuple{"bare-bf16", "bare-f32", 8}}) {
    INFO(low);
    const auto expected = load_test_data(std::string("gpt2/") + high + ".expected.safetensors");
    const auto a = attn::load_gpt2_checkpoint(checkpoint_bytes(low), config_of(expected));
    const auto b = attn::load_gpt2_checkpoint(checkpoint_bytes(high), config_of(expected));
    std::size_t changed = 0, total = 0;
    for (const auto& info : b->parameter_table()) {
      INFO(info.name);
      const auto pa = a->parameter_values(info.name), pb = b->parameter_values(info.name);
      REQUIRE(pa.size() == pb.size());
      // The weight matrices stay 2-byte, the LayerNorm parameters and biases are float.
      CHECK(a->parameter_info(info.name).half.has_value() ==
            (info.shape.size() == 2 && info.name != "pos.weight"));
      CHECK_FALSE(b->parameter_info(info.name).half);
      for (std::size_t i = 0; i < pa.size(); ++i) {
        // round to nearest: within half an ulp of `bits` significant bits (F16 subnormals: 2^-25)
        const double tolerance = std::max(std::ldexp(std::abs(double(pb[i])), -bits), 0x1p-25);
        CHECK(std::abs(double(pa[i]) - double(pb[i])) <= tolerance);
        changed += pa[i] != pb[i];
      }
      total += pa.size();
    }
    CHECK(changed > total / 2);  // really rounded
    // The memory the parameters take: 2 bytes per kept value.
    CHECK(a->parameter_bytes() < b->parameter_bytes() * 6 / 10);
    CHECK_THROWS_WITH(a->parameter("layers.0.attn.in_proj_weight"),
                      ContainsSubstring("is kept in") && ContainsSubstring("no float32 copy"));
    auto trainable = attn::load_gpt2_checkpoint(checkpoint_bytes(low), config_of(expected));
    const std::vector<std::int32_t> ids{1, 2, 3};
    CHECK_THROWS_WITH(trainable->loss_and_gradients(ids, ids, 1, 3),
                      ContainsSubstring("kept in the checkpoint's 2-byte form"));
  }
}

TEST_CASE("the Conv1D weights are transposed into our layout", "[gpt2]") {
  const auto bytes = checkpoint_bytes("tiny-f32");
  const auto file = st::File::parse(bytes);
  const auto model = attn::load_gpt2_checkpoint(bytes, tiny_config());
  const auto stored = file.f32("transformer.h.1.mlp.c_fc.weight");  // [32, 128]
  const auto ours = model->parameters().subspan(
      model->parameter_info("layers.1.mlp.fc.weight").offset, 128 * 32);  // [128, 32]
  CHECK(ours[5 * 32 + 7] == stored[7 * 128 + 5]);
  CHECK(ours[127 * 32 + 31] == stored[31 * 128 + 127]);
  CHECK(model->parameter_table().size() == 2 + 2 * 12 + 2);
}

TEST_CASE("causal-mask buffers stored as BOOL (newer conversions) are read and ignored", "[gpt2]") {
  // tiny-f32 plus h.i.attn.bias [1, 1, 32, 32] as BOOL (a lower-triangular mask), as newer
  // conversions of GPT-2 store it: the model is the same as without the buffers.
  std::vector<std::uint8_t> mask(32 * 32);
  for (std::size_t i = 0; i < 32; ++i) {
    for (std::size_t j = 0; j <= i; ++j) mask[i * 32 + j] = 1;
  }
  auto file = st::File::parse(checkpoint_bytes("tiny-f32"));
  std::vector<st::TensorToWrite> tensors;
  for (const auto& info : file.tensors()) {
    const auto raw = file.raw(info);
    tensors.push_back({info.name, info.dtype, info.shape, {raw.begin(), raw.end()}});
  }
  for (int layer = 0; layer < 2; ++layer) {
    tensors.push_back({"transformer.h." + std::to_string(layer) + ".attn.bias",
                       st::DType::Bool,
                       {1, 1, 32, 32},
                       mask});
  }
  const auto bytes = st::write(tensors);
  const auto with_masks = st::File::parse(bytes);
  CHECK(with_masks.info("transformer.h.1.attn.bias").dtype == st::DType::Bool);
  CHECK(with_masks.bools("transformer.h.1.attn.bias") == mask);
  CHECK_THROWS_WITH(with_masks.as_f32("transformer.h.1.attn.bias"),
                    ContainsSubstring("a BOOL tensor is not floating point"));
  const auto model = attn::load_gpt2_checkpoint(bytes, tiny_config());
  const auto plain = attn::load_gpt2_checkpoint(checkpoint_bytes("tiny-f32"), tiny_config());
  const auto a = model->parameters(), b = plain->parameters();
  CHECK(std::vector<float>(a.begin(), a.end()) == std::vector<float>(b.begin(), b.end()));
  // A BOOL tensor where a parameter belongs is refused by name.
  const auto bool_weight = edited_tiny([](st::TensorToWrite& t) {
    if (t.name == "transformer.h.0.ln_1.weight") {
      t.dtype = st::DType::Bool;
      t.bytes.assign(32, 1);
    }
    return true;
  });
  CHECK_THROWS_WITH(attn::load_gpt2_checkpoint(bool_weight, tiny_config()),
                    ContainsSubstring("'transformer.h.0.ln_1.weight' is BOOL; supported: F32"));
}

TEST_CASE("other architectures are refused as such", "[gpt2]") {
  const auto bert =
      renamed_tiny("transformer.wte.weight", "bert.embeddings.word_embeddings.weight");
  CHECK_THROWS_WITH(attn::load_gpt2_checkpoint(bert, tiny_config()),
                    ContainsSubstring("this looks like a BERT checkpoint") &&
                        ContainsSubstring("supported: the GPT-2 family"));
  const auto llama =
      renamed_tiny("transformer.h.0.attn.c_attn.weight", "model.layers.0.self_attn.q_proj.weight");
  CHECK_THROWS_WITH(attn::load_gpt2_checkpoint(llama, tiny_config()),
                    ContainsSubstring("this looks like a Llama checkpoint"));
  const auto unknown = renamed_tiny("transformer.ln_f.bias", "transformer.ln_f.beta");
  CHECK_THROWS_WITH(attn::load_gpt2_checkpoint(unknown, tiny_config()),
                    ContainsSubstring("tensor 'transformer.ln_f.beta' [32] is not a GPT-2 tensor"));
  auto config = tiny_config();
  config.model_type = "bert";
  CHECK_THROWS_WITH(attn::load_gpt2_checkpoint(checkpoint_bytes("tiny-f32"), config),
                    ContainsSubstring("config.json has model_type 'bert'"));
}

TEST_CASE("a config that disagrees with the tensors is named", "[gpt2]") {
  const auto bytes = checkpoint_bytes("tiny-f32");
  auto config = tiny_config();
  config.n_embd = 64;
  CHECK_THROWS_WITH(attn::load_gpt2_checkpoint(bytes, config),
                    ContainsSubstring("tensor 'transformer.wte.weight' has shape [64, 32], "
                                      "config.json (n_embd 64, vocab_size 64, n_positions 32) "
                                      "needs [64, 64]"));
  config = tiny_config();
  config.n_layer = 3;
  CHECK_THROWS_WITH(
      attn::load_gpt2_checkpoint(bytes, config),
      ContainsSubstring("config.json says n_layer 3 but the checkpoint has 2 layers"));
  config = tiny_config();
  config.n_head = 3;
  CHECK_THROWS_WITH(attn::load_gpt2_checkpoint(bytes, config),
                    ContainsSubstring("n_embd 32 is not divisible by n_head 3"));
  config = tiny_config();
  config.layer_norm_epsilon = 1e-6;
  CHECK_THROWS_WITH(
      attn::load_gpt2_checkpoint(bytes, config),
      ContainsSubstring("layer_norm_epsilon") && ContainsSubstring("supported: 1e-05"));
  config = tiny_config();
  config.activation_function = "relu";
  CHECK_THROWS_WITH(attn::load_gpt2_checkpoint(bytes, config),
                    ContainsSubstring("activation_function is 'relu'"));
}

TEST_CASE("missing, untied, non-finite and truncated checkpoints are refused", "[gpt2]") {
  const auto missing =
      edited_tiny([](const st::TensorToWrite& t) { return t.name != "transformer.h.1.ln_2.bias"; });
  CHECK_THROWS_WITH(attn::load_gpt2_checkpoint(missing, tiny_config()),
                    ContainsSubstring("no tensor for 'layers.1.ln2.bias' [32] (GPT-2 name: "
                                      "h.1.ln_2.bias)"));
  const auto untied = edited_tiny([](st::TensorToWrite& t) {
    if (t.name == "lm_head.weight") t.bytes[100] ^= 1;
    return true;
  });
  CHECK_THROWS_WITH(attn::load_gpt2_checkpoint(untied, tiny_config()),
                    ContainsSubstring("lm_head.weight differs from wte.weight"));
  const auto nan = edited_tiny([](st::TensorToWrite& t) {
    if (t.name == "transformer.ln_f.weight") {
      const float value = std::nanf("");
      std::memcpy(t.bytes.data(), &value, 4);
    }
    return true;
  });
  CHECK_THROWS_WITH(attn::load_gpt2_checkpoint(nan, tiny_config()),
                    ContainsSubstring("tensor 'transformer.ln_f.weight' holds a non-finite value"));
  auto truncated = checkpoint_bytes("tiny-f32");
  truncated.resize(truncated.size() - 100);
  CHECK_THROWS_WITH(attn::load_gpt2_checkpoint(truncated, tiny_config()),
                    ContainsSubstring("past the end of the data buffer"));
  const auto both = renamed_tiny("lm_head.weight", "wte.weight");
  CHECK_THROWS_WITH(attn::load_gpt2_checkpoint(both, tiny_config()),
                    ContainsSubstring("has both 'transformer.wte.weight' and 'wte.weight'"));
}

TEST_CASE("a checkpoint too large for the tab is refused from its header", "[gpt2]") {
  // gpt2-xl's shapes (48 layers, d 1600): only the header is given, with the file's size.
  const attn::Gpt2Config config{
      .n_layer = 48, .n_head = 25, .n_embd = 1600, .n_positions = 1024, .vocab_size = 50257};
  const std::size_t d = 1600;
  std::string header = "{";
  std::uint64_t offset = 0;
  const auto add = [&](const std::string& name, std::vector<std::size_t> shape) {
    std::uint64_t size = 4;
    std::string dims;
    for (const auto s : shape) {
      size *= s;
      dims += (dims.empty() ? "" : ",") + std::to_string(s);
    }
    header += (header.size() > 1 ? "," : "") + std::string("\"") + name +
              "\":{\"dtype\":\"F32\",\"shape\":[" + dims + "],\"data_offsets\":[" +
              std::to_string(offset) + "," + std::to_string(offset + size) + "]}";
    offset += size;
  };
  add("wte.weight", {50257, d});
  add("wpe.weight", {1024, d});
  for (int l = 0; l < 48; ++l) add("h." + std::to_string(l) + ".ln_1.weight", {d});
  header += "}";
  std::vector<std::uint8_t> head(8);
  for (int i = 0; i < 8; ++i) head[i] = std::uint8_t(header.size() >> (8 * i));
  head.insert(head.end(), header.begin(), header.end());
  CHECK_THROWS_WITH(
      attn::CheckpointImport({head}, {head.size() + offset}, attn::checkpoint_config(config)),
      ContainsSubstring("too large for the tab: 1557611200 parameters need 6230 MB (F16 and "
                        "BF16 weights kept 2-byte, the others float32)"));
}

TEST_CASE("the malformed GPT-2 corpus gives its expected messages; its seeds load", "[gpt2]") {
  const std::string dir = std::string(ATTN_TEST_DATA_DIR) + "/malformed-gpt2/";
  // tests/data/malformed-gpt2/config.json
  const attn::Gpt2Config config{
      .n_layer = 2, .n_head = 2, .n_embd = 8, .n_positions = 8, .vocab_size = 16};
  const auto expected = read_json_string_map(dir + "expected.json");
  REQUIRE(expected.size() >= 15);
  for (const auto& [name, message] : expected) {
    INFO(name);
    CHECK_THROWS_WITH(attn::load_gpt2_checkpoint(read_file(dir + name), config),
                      ContainsSubstring(message));
  }
  const std::string seeds = std::string(ATTN_TEST_DATA_DIR) + "/../fuzz/seeds-gpt2/";
  for (const char* name : {"valid-f32", "valid-f16-prefix-lmhead-buffers", "valid-bf16"}) {
    INFO(name);
    const auto model = attn::load_gpt2_checkpoint(read_file(seeds + name + ".safetensors"), config);
    const std::vector<std::int32_t> ids = {1, 5, 15};
    const auto out = model->forward(ids, 1, 3);
    for (const float value : out.logits) CHECK(std::isfinite(value));
  }
}
