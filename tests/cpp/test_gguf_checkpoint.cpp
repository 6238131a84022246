// GGUF files read as checkpoints (model/gguf_checkpoint, the import's GGUF path): the tiny golden
// checkpoints as llama.cpp's converter writes them (tests/data/gguf, from
// scripts/data/make-gguf-checkpoints.py) give the .safetensors model's numbers — F32 bit for bit
// (llama's q/k permutation undone), F16 equal to the same F16 weights as .safetensors, Q8_0 equal
// to its dequantized weights as .safetensors —, quantized weights kept in their blocks giving the
// numbers of the same file dequantized to float at load, the header read by growing prefixes,
// chunks of any size, and every refused file (tests/data/malformed-gguf) refused with its message.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/io/json.hpp"
#include "attention/model/checkpoint_import.hpp"
#include "attention/model/gguf_checkpoint.hpp"
#include "checkpoint_cases.hpp"
#include "test_support.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes gguf_file(const std::string& name) {
  return read_file(std::string(ATTN_TEST_DATA_DIR) + "/gguf/" + name);
}

// A case's .safetensors checkpoint (folder, name) and the GGUF files written from it.
struct GgufCase {
  const char* gguf;    // "llama": llama-f32.gguf, llama-f16.gguf, llama-q8_0.gguf
  const char* folder;  // the .safetensors golden's folder and name
  const char* name;
  bool q8_0 = true;  // whether there is a Q8_0 file (qwen3's and phi3's rows are no whole blocks)
  bool f32 = true;   // whether there is an F32 file (gemma3's six layers: F16 only)
  // The config.json the file stands for, in tests/data/gguf, when it is not the golden's: Gemma's
  // files follow llama.cpp's rules (query_pre_attn_scalar = head_dim, Gemma 3's fixed pattern of
  // six), which these goldens' configs do not; the golden's PyTorch numbers are then not theirs.
  const char* config = nullptr;
};
const GgufCase kCases[] = {
    {"llama", "llama", "llama-f32"},
    {"qwen2", "llama", "qwen2-f32"},
    {"qwen3", "families", "qwen3-f32", false},
    {"phi3", "families", "phi3-f32", false},
    {"pythia", "families", "pythia-f32"},
    {"gemma2", "families", "gemma2-f32", false, true, "gemma2.config.json"},
    // the golden's three layers twice, so that the sixth is global (its F16 twin holds them)
    {"gemma3", "families", "gemma3-pattern-f32", false, false, "gemma3.config.json"},
    {"gpt2", "gpt2", "tiny-f32"}};

std::string config_text(const GgufCase& c) {
  if (c.config == nullptr) return CheckpointCases{c.folder}.config_text(c.name);
  const Bytes text = gguf_file(c.config);
  return std::string(text.begin(), text.end());
}

std::unique_ptr<attn::Model> load_safetensors(const GgufCase& c, const Bytes& file) {
  return attn::load_checkpoint({file}, config_of(config_text(c)));
}

// Two models' logits and attention on the golden file's ids, equal bit for bit.
void require_same_forward(attn::Model& a, attn::Model& b, const attn::safetensors::File& expected) {
  std::vector<std::int32_t> ids;
  for (const double id : expected.f64("ids")) ids.push_back(std::int32_t(id));
  const auto x = a.forward(ids, 1, ids.size());
  const std::vector<float> logits(x.logits.begin(), x.logits.end());
  std::vector<std::vector<float>> attention;
  for (const auto& layer : x.attention) attention.emplace_back(layer.begin(), layer.end());
  const auto y = b.forward(ids, 1, ids.size());
  REQUIRE(logits.size() == y.logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i) {
    INFO("logit " << i);
    REQUIRE(logits[i] == y.logits[i]);
  }
  REQUIRE(attention.size() == y.attention.size());
  for (std::size_t l = 0; l < attention.size(); ++l) {
    for (std::size_t i = 0; i < attention[l].size(); ++i) {
      INFO("layer " << l << " attention " << i);
      REQUIRE(attention[l][i] == y.attention[l][i]);
    }
  }
}

// The relative distance ‖ours − f64‖ / ‖f64‖ of a model's logits from the golden float64 run.
double logits_distance(attn::Model& model, const attn::safetensors::File& expected) {
  std::vector<std::int32_t> ids;
  for (const double id : expected.f64("ids")) ids.push_back(std::int32_t(id));
  const auto out = model.forward(ids, 1, ids.size());
  const auto f64 = expected.f64("logits64");
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < f64.size(); ++i) {
    diff += (out.logits[i] - f64[i]) * (out.logits[i] - f64[i]);
    norm += f64[i] * f64[i];
  }
  return std::sqrt(diff / norm);
}

}  // namespace

// kquants.gguf and quants32.gguf: random llamas whose matrices are random blocks of each type.
struct QuantizedFile {
  const char* file;
  std::size_t d, head_dim, kv_rows, ff;
  std::set<std::string> types;
};
const QuantizedFile kQuantizedFiles[] = {
    {"kquants.gguf", 256, 64, 128, 256, {"F32", "Q4_0", "Q4_K", "Q5_K", "Q6_K", "Q8_0"}},
    {"quants32.gguf", 96, 24, 48, 160, {"F32", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0"}}};

TEST_CASE("quantized blocks are kept in the parameters they fill, each row where it belongs",
          "[gguf]") {
  for (const QuantizedFile& file : kQuantizedFiles) {
    INFO(file.file);
    const Bytes bytes = gguf_file(file.file);
    const auto model = attn::load_gguf_checkpoint(bytes);  // in 64 KB chunks: blocks split
    CHECK(model->has_quantized_parameters());
    const attn::gguf::Index index = attn::gguf::parse(bytes);
    const std::size_t head_dim = file.head_dim, d = file.d;
    // Where stored row r of a tensor goes: its parameter, that parameter's first row, and llama's
    // q/k permutation undone (within each head, stored row 2·j + s is row s·head_dim/2 + j).
    struct Place {
      const char* gguf;
      const char* ours;
      std::size_t first_row;
      bool permuted;
    };
    const Place places[] = {
        {"token_embd.weight", "embed.weight", 0, false},
        {"blk.0.attn_norm.weight", "layers.0.ln1.weight", 0, false},
        {"blk.0.attn_q.weight", "layers.0.attn.in_proj_weight", 0, true},
        {"blk.0.attn_k.weight", "layers.0.attn.in_proj_weight", d, true},
        {"blk.0.attn_v.weight", "layers.0.attn.in_proj_weight", d + file.kv_rows, false},
        {"blk.0.attn_output.weight", "layers.0.attn.out_proj.weight", 0, false},
        {"blk.0.ffn_norm.weight", "layers.0.ln2.weight", 0, false},
        {"blk.0.ffn_gate.weight", "layers.0.mlp.fc.weight", 0, false},
        {"blk.0.ffn_up.weight", "layers.0.mlp.fc.weight", file.ff, false},
        {"blk.0.ffn_down.weight", "layers.0.mlp.proj.weight", 0, false},
        {"output_norm.weight", "ln_f.weight", 0, false},
        {"output.weight", "unembed.weight", 0, false}};
    REQUIRE(index.tensors.size() == std::size(places));
    std::set<std::string> types;
    for (const Place& place : places) {
      INFO(place.gguf);
      const attn::gguf::TensorInfo* tensor = index.find(place.gguf);
      REQUIRE(tensor != nullptr);
      types.insert(attn::ggml_type_name(tensor->type));
      CHECK(model->parameter_info(place.ours).quantized == (tensor->type != attn::GgmlType::F32));
      const std::vector<float> values = attn::gguf::tensor_values(*tensor, bytes);
      const std::vector<float> parameter = model->parameter_values(place.ours);
      const std::size_t row_length = tensor->dims[0];
      const std::size_t rows = values.size() / row_length;
      REQUIRE(row_length == (tensor->dims.size() == 1 ? d : tensor->dims[0]));
      std::size_t mismatches = 0;
      for (std::size_t r = 0; r < rows; ++r) {
        std::size_t row = r;
        if (place.permuted) {
          const std::size_t head = r / head_dim, within = r % head_dim;
          row = head * head_dim + (within % 2) * (head_dim / 2) + within / 2;
        }
        for (std::size_t c = 0; c < row_length; ++c) {
          const float ours = parameter[(place.first_row + row) * row_length + c];
          if (!(ours == values[r * row_length + c])) ++mismatches;
        }
      }
      CHECK(mismatches == 0);
    }
    CHECK(types == file.types);
  }
}

// The old path (every block dequantized to float32 at load) is the reference: the kernels over the
// kept blocks sum the same dequantized values in the same order (quantized_linear.hpp).
TEST_CASE("a quantized GGUF model gives the numbers of the same file dequantized to float at load",
          "[gguf]") {
  for (const QuantizedFile& file : kQuantizedFiles) {
    INFO(file.file);
    const Bytes bytes = gguf_file(file.file);
    const auto kept = attn::load_gguf_checkpoint(bytes);
    const auto floats = attn::load_gguf_checkpoint(bytes, false);
    CHECK_FALSE(floats->has_half_parameters());
    // its memory: the blocks (the file's tensor bytes, Q4_K/Q5_K's scales unpacked, panels padded)
    CHECK(kept->parameter_bytes() * 3 < floats->parameter_bytes());
    CHECK(double(kept->parameter_bytes()) <= 1.2 * double(bytes.size()));
    std::vector<std::int32_t> ids;
    for (std::int32_t i = 0; i < 11; ++i) ids.push_back((i * 7 + 3) % std::int32_t(file.d / 8));
    const auto x = kept->forward(ids, 1, ids.size());
    const std::vector<float> logits(x.logits.begin(), x.logits.end());
    const std::vector<float> attention(x.attention[0].begin(), x.attention[0].end());
    const auto y = floats->forward(ids, 1, ids.size());
    REQUIRE(logits.size() == y.logits.size());
    std::size_t differing = 0;
    for (std::size_t i = 0; i < logits.size(); ++i) differing += !(logits[i] == y.logits[i]);
    for (std::size_t i = 0; i < attention.size(); ++i) {
      differing += !(attention[i] == y.attention[0][i]);
    }
    CHECK(differing == 0);
    // and a generation step (the one-row kernels: each group's quants summed with x, then scaled)
    // gives the full forward's last row within float32 rounding: every logit within 2^-16 of the
    // row's largest magnitude (a few float32 roundings per layer, carried through two layers)
    attn::KvCache cache;
    kept->prefill(std::span<const std::int32_t>(ids.data(), ids.size() - 1), ids.size(), cache);
    const attn::CachedStep step = kept->decode(ids.back(), cache);
    const std::size_t vocab = kept->config().vocab;
    const float* last = logits.data() + (ids.size() - 1) * vocab;
    double largest = 0.0, worst = 0.0;
    for (std::size_t i = 0; i < vocab; ++i) {
      largest = std::max(largest, std::abs(double(last[i])));
      worst = std::max(worst, std::abs(double(step.logits[i]) - double(last[i])));
    }
    INFO("largest logit " << largest << ", worst difference " << worst);
    CHECK(worst <= std::ldexp(largest, -16));
  }
  // a model whose family trains (GPT-2) is refused training while it keeps blocks, readably
  const auto gpt2 = attn::load_gguf_checkpoint(gguf_file("gpt2-q8_0.gguf"));
  const std::vector<std::int32_t> ids = {1, 2, 3};
  CHECK_THROWS_WITH(gpt2->loss_and_gradients(ids, ids, 1, ids.size()),
                    ContainsSubstring("kept in the checkpoint's quantized blocks (a GGUF file's"));
}

TEST_CASE("a GGUF file's config is its metadata's, read as the family's config.json", "[gguf]") {
  for (const GgufCase& c : kCases) {
    INFO(c.gguf);
    const Bytes bytes = gguf_file(std::string(c.gguf) + (c.f32 ? "-f32.gguf" : "-f16.gguf"));
    const auto files = attn::describe_checkpoint_files({bytes}, {bytes.size()});
    REQUIRE(files[0].format == attn::CheckpointFormat::Gguf);
    const attn::CheckpointConfig ours = attn::checkpoint_config_for(files, std::nullopt);
    const attn::CheckpointConfig theirs = config_of(config_text(c));
    CHECK(ours.family == theirs.family);
    const attn::ModelConfig &a = ours.model, &b = theirs.model;
    CHECK(a.layers == b.layers);
    CHECK(a.d_model == b.d_model);
    CHECK(a.heads == b.heads);
    CHECK(attn::attention_shape(a).kv_heads == attn::attention_shape(b).kv_heads);
    CHECK(attn::attention_shape(a).head_dim == attn::attention_shape(b).head_dim);
    CHECK(attn::mlp_width(a) == attn::mlp_width(b));
    CHECK(a.vocab == b.vocab);
    CHECK(a.context == b.context);
    CHECK(a.tied == b.tied);
    CHECK(a.bias.qkv == b.bias.qkv);
    CHECK(a.bias.out == b.bias.out);
    CHECK(a.bias.mlp == b.bias.mlp);
    CHECK(a.norm == b.norm);
    // GGUF stores ε and θ as f32: the same float the forward uses
    CHECK(float(a.norm_eps) == float(b.norm_eps));
    CHECK(a.embedding_scale == b.embedding_scale);
    CHECK(a.final_softcap == b.final_softcap);
    REQUIRE(a.blocks.size() == b.blocks.size());
    for (std::size_t l = 0; l < a.blocks.size(); ++l) {
      INFO("layer " << l);
      const attn::BlockConfig &x = a.blocks[l], &y = b.blocks[l];
      CHECK(x.rope.base == y.rope.base);                // Gemma 3: local and global
      CHECK(x.rope.frequencies == y.rope.frequencies);  // Gemma 3's linear scaling, full layers
      CHECK(x.rope.scaling == y.rope.scaling);
      CHECK(x.rope.rotary_dims == y.rope.rotary_dims);  // Pythia's rotary_pct
      CHECK(x.activation == y.activation);
      CHECK(x.window == y.window);  // phi3's sliding window of 6, Gemma's sliding layers
      CHECK(x.qk_norm == y.qk_norm);
      CHECK(x.norms == y.norms);
      CHECK(x.parallel_residual == y.parallel_residual);
      CHECK(x.attention_scale == y.attention_scale);
      CHECK(x.logit_softcap == y.logit_softcap);
    }
    CHECK(ours.eos_ids == theirs.eos_ids);
  }
  // A GGUF file with a config.json, or a .safetensors file without one, is refused.
  const Bytes gguf = gguf_file("llama-f32.gguf");
  const auto files = attn::describe_checkpoint_files({gguf}, {gguf.size()});
  CHECK_THROWS_WITH(attn::checkpoint_config_for(files, std::string("{}")),
                    ContainsSubstring("this is a GGUF file, whose metadata holds its config"));
  const Bytes st = CheckpointCases{"llama"}.checkpoint_bytes("llama-f32");
  const auto st_files = attn::describe_checkpoint_files({st}, {st.size()});
  CHECK_THROWS_WITH(attn::checkpoint_config_for(st_files, std::nullopt),
                    ContainsSubstring("loadCheckpoint needs config"));
}

TEST_CASE("F32 GGUF files give the .safetensors model's logits and attention bit for bit",
          "[gguf]") {
  for (const GgufCase& c : kCases) {
    if (!c.f32) continue;
    INFO(c.gguf);
    const CheckpointCases cases{c.folder};
    const auto expected = cases.expected(c.name);
    const auto gguf = attn::load_gguf_checkpoint(gguf_file(std::string(c.gguf) + "-f32.gguf"));
    const auto safetensors = load_safetensors(c, cases.checkpoint_bytes(c.name));
    require_same_forward(*gguf, *safetensors, expected);
    // and PyTorch's, by the golden rule (where the file stands for the golden's config)
    if (c.config == nullptr) require_golden_forward(*gguf, expected);
  }
}

TEST_CASE("F16 GGUF files keep their matrices 2-byte, as the same F16 .safetensors does",
          "[gguf]") {
  for (const GgufCase& c : kCases) {
    INFO(c.gguf);
    const auto expected = CheckpointCases{c.folder}.expected(c.name);
    const auto gguf = attn::load_gguf_checkpoint(gguf_file(std::string(c.gguf) + "-f16.gguf"));
    CHECK(gguf->has_half_parameters());
    const auto twin = load_safetensors(c, gguf_file(std::string(c.gguf) + "-f16.safetensors"));
    CHECK(twin->has_half_parameters());
    require_same_forward(*gguf, *twin, expected);
    // F16 rounds each weight by at most 2^-11 relatively; through two layers and the
    // unembedding, the logits stay within 1 % of the float64 run of the unrounded weights
    // (measured: 0.08 % at most).
    if (c.config == nullptr) CHECK(logits_distance(*gguf, expected) < 1e-2);
  }
}

TEST_CASE("Q8_0 GGUF files keep their blocks: the model of their dequantized weights, bit for bit",
          "[gguf]") {
  for (const GgufCase& c : kCases) {
    if (!c.q8_0) continue;
    INFO(c.gguf);
    const auto expected = CheckpointCases{c.folder}.expected(c.name);
    const auto gguf = attn::load_gguf_checkpoint(gguf_file(std::string(c.gguf) + "-q8_0.gguf"));
    CHECK(gguf->has_quantized_parameters());
    // the dequantized values (d · q, exact in float), computed by the test script from the blocks
    const auto twin =
        load_safetensors(c, gguf_file(std::string(c.gguf) + "-q8_0.dequantized.safetensors"));
    require_same_forward(*gguf, *twin, expected);
    // Q8_0 rounds each weight by at most d/2 = max|x|/254 of its block of 32: the logits of
    // these random weights stay within 5 % of the float64 run of the unrounded ones (measured:
    // 2.1 % at most)
    CHECK(logits_distance(*gguf, expected) < 5e-2);
  }
}

// Llama 3.1's and 3.2's RoPE scaling as llama.cpp's converter writes it: rope_freqs.weight, one
// float32 factor per rotated pair (make-gguf-checkpoints.py computes them as the converter does,
// in float32, for tests/data/llama/llama3-f32, whose config.json has rope_scaling llama3).
TEST_CASE("a Llama 3 GGUF file's rope_freqs.weight gives config.json's llama3 rope_scaling",
          "[gguf]") {
  const CheckpointCases cases{"llama"};
  const auto expected = cases.expected("llama3-f32");
  const attn::CheckpointConfig theirs = config_of(cases.config_text("llama3-f32"));
  const auto safetensors = attn::load_checkpoint({cases.checkpoint_bytes("llama3-f32")}, theirs);
  const Bytes bytes = gguf_file("llama3-f32.gguf");
  // the metadata alone has no factors: the frequencies come with the tensor's data
  const auto files = attn::describe_checkpoint_files({bytes}, {bytes.size()});
  CHECK(attn::checkpoint_config_for(files, std::nullopt).model.blocks[0].rope.frequencies.empty());
  const auto gguf = attn::load_gguf_checkpoint(bytes);
  const attn::ModelConfig& ours = gguf->config();
  REQUIRE(ours.blocks.size() == theirs.model.blocks.size());
  // θ_i = base^(−2i/d) / factor_i against transformers' llama3 frequencies (double): the factors
  // are computed and stored in float32 (torch's float32 frequencies, wavelengths and blend), so
  // each θ is within a few float32 roundings of config.json's, relatively: 4 · 2^-23 allowed.
  double largest = 0;
  for (std::size_t l = 0; l < ours.blocks.size(); ++l) {
    const attn::RopeSpec &a = ours.blocks[l].rope, &b = theirs.model.blocks[l].rope;
    CHECK(a.scaling == attn::RopeScaling::Llama3);
    CHECK(a.scaling == b.scaling);
    CHECK(a.base == b.base);
    REQUIRE(a.frequencies.size() == 12);  // head_dim 24
    REQUIRE(a.frequencies.size() == b.frequencies.size());
    for (std::size_t i = 0; i < a.frequencies.size(); ++i) {
      largest = std::max(largest, std::abs(a.frequencies[i] / b.frequencies[i] - 1.0));
    }
  }
  INFO("largest relative difference of a frequency: " << largest);
  CHECK(largest <= 4.0 * 0x1p-23);
  // the pairs scaled by 8 (and the unscaled first one) differ from the unscaled base's: the
  // factors were applied
  CHECK(ours.blocks[0].rope.frequencies[11] < 0.2 * attn::rope_frequency(11, 24, 500000.0));
  // the logits and attention: PyTorch's golden rule (within 4× its float32 error of the float64
  // run), as the .safetensors model is
  require_golden_forward(*gguf, expected);
  require_golden_forward(*safetensors, expected);
  // and F16: the matrices kept 2-byte, the factors F32, within F16's rounding of the golden
  const auto half = attn::load_gguf_checkpoint(gguf_file("llama3-f16.gguf"));
  CHECK(half->has_half_parameters());
  CHECK(half->config().blocks[1].rope.frequencies == ours.blocks[1].rope.frequencies);
  CHECK(logits_distance(*half, expected) < 1e-2);
}

TEST_CASE("a GGUF header is read from growing prefixes and its tensors in chunks of any size",
          "[gguf]") {
  const Bytes bytes = gguf_file("llama-q8_0.gguf");
  // the first read of a GGUF header is 1 MB (or the file): a prefix of 40 bytes asks for more
  attn::CheckpointFiles files({bytes.size()});
  std::vector<std::uint64_t> asked;
  while (!files.ready()) {
    std::vector<std::span<const std::uint8_t>> spans;
    std::vector<attn::ByteRange> ranges = files.needed();
    for (attn::ByteRange& range : ranges) {
      asked.push_back(range.end);
      spans.emplace_back(bytes.data() + range.begin, std::size_t(range.end - range.begin));
    }
    files.provide(spans);
  }
  REQUIRE(asked.size() == 2);
  CHECK(asked[0] == attn::CheckpointFiles::kFirstBytes);
  CHECK(asked[1] == bytes.size());  // a small file is read whole by the 1 MB first read
  const auto index = attn::gguf::parse_head(std::span(bytes).first(40), bytes.size());
  CHECK_FALSE(index.index);
  CHECK(index.bytes_needed > 40);

  // Chunks of 7 bytes (values and Q8_0's 34-byte blocks split between chunks) build the model
  // 64 KB chunks do.
  attn::CheckpointImport import(files.files(), attn::checkpoint_config_for(files.files(), {}));
  for (std::size_t i = 0; i < import.reads().size(); ++i) {
    const attn::CheckpointRead& where = import.reads()[i];
    CHECK(where.format == (where.name.ends_with("norm.weight") ? "F32" : "Q8_0"));
    for (std::uint64_t at = 0; at < where.end - where.begin; at += 7) {
      const std::size_t size =
          std::size_t(std::min<std::uint64_t>(7, where.end - where.begin - at));
      import.read(i, std::span(bytes).subspan(std::size_t(where.begin + at), size), at);
    }
  }
  const auto chunked = import.finish();
  const auto whole = attn::load_gguf_checkpoint(bytes);
  require_same_forward(*chunked, *whole, CheckpointCases{"llama"}.expected("llama-f32"));
}

TEST_CASE("a GGUF header of 2.5 MB (a real tokenizer's size) is read in growing prefixes",
          "[gguf]") {
  // llama-f32.gguf with a string key of 2.5 MB inserted first: a multiple of the alignment (32),
  // so every tensor's offset in the data section stays valid
  const Bytes small = gguf_file("llama-f32.gguf");
  const std::string key = "general.description";
  std::size_t length = 2'500'000;
  while ((8 + key.size() + 4 + 8 + length) % 32 != 0) ++length;
  Bytes entry;
  const auto put = [&](std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) entry.push_back(std::uint8_t(value >> (8 * i)));
  };
  put(key.size(), 8);
  entry.insert(entry.end(), key.begin(), key.end());
  put(8, 4);  // a string
  put(length, 8);
  entry.resize(entry.size() + length, 'x');
  Bytes big(small.begin(), small.begin() + 24);
  big.insert(big.end(), entry.begin(), entry.end());
  big.insert(big.end(), small.begin() + 24, small.end());
  big[16] += 1;  // the metadata count (u64 at byte 16)

  attn::CheckpointFiles files({big.size()});
  std::vector<std::uint64_t> asked;
  while (!files.ready()) {
    std::vector<std::span<const std::uint8_t>> spans;
    for (const attn::ByteRange& range : files.needed()) {
      CHECK(range.begin == 0);
      asked.push_back(range.end);
      spans.emplace_back(big.data(), std::size_t(range.end));
    }
    files.provide(spans);
  }
  // 16 bytes (the magic), 1 MB, then at least twice as many each time (or the whole file) until
  // the header is held
  REQUIRE(asked.size() >= 4);
  CHECK(asked[1] == attn::gguf::kFirstHeadBytes);
  for (std::size_t i = 2; i < asked.size(); ++i) {
    CHECK(asked[i] >= std::min<std::uint64_t>(2 * asked[i - 1], big.size()));
  }
  CHECK(files.files()[0].gguf->metadata.string(key).size() == length);
  const auto model = attn::load_gguf_checkpoint(big);
  const auto reference = attn::load_gguf_checkpoint(small);
  require_same_forward(*model, *reference, CheckpointCases{"llama"}.expected("llama-f32"));
}

// The headers of Qwen2.5-shaped Q4_K_M files (make-gguf-checkpoints.py): no data, and zeros for
// the start of it, which the first read (1 MB) takes with the header.
attn::CheckpointFiles described_head(const std::string& name, std::uint64_t file_size) {
  Bytes head = gguf_file(name);
  head.resize(attn::gguf::kFirstHeadBytes, 0);
  attn::CheckpointFiles files({file_size});
  while (!files.ready()) {
    std::vector<std::span<const std::uint8_t>> spans;
    for (const attn::ByteRange& range : files.needed()) {
      REQUIRE(range.end <= head.size());  // nothing past the first 1 MB is asked for
      spans.emplace_back(head.data() + range.begin, std::size_t(range.end - range.begin));
    }
    files.provide(spans);
  }
  return files;
}

TEST_CASE("a 1.5 B Q4_K_M GGUF fits in its file's bytes; a 7 B one is refused from its header",
          "[gguf]") {
  const std::uint64_t file_size = 1031210688;  // the whole file's, as the script computed it
  const attn::CheckpointFiles files = described_head("qwen2-1.5b-q4_k_m.head.gguf", file_size);
  const attn::CheckpointConfig config = attn::checkpoint_config_for(files.files(), {});
  CHECK(config.family == &attn::qwen2_family());
  CHECK(config.model.layers == 28);
  CHECK(config.model.tied);
  // 151 936 · 1 536 + 28 layers of q/k/v (with biases), o, gate/up/down and two norms + the final
  // norm = 1 543 714 304 parameters: 6 174 MB in float32, its blocks (Q4_K's scales unpacked: 4
  // bytes more per 144) and the float norms and biases within 1.2 × the file
  const attn::CheckpointImport import(files.files(), config);
  CHECK(double(import.parameter_bytes()) <= 1.2 * double(file_size));
  CHECK(double(import.parameter_bytes()) >= double(file_size) * 0.99);
  // Qwen2.5-7B's shapes (untied: 7.6 B parameters with its output layer, left out of this header)
  const attn::CheckpointFiles large = described_head("qwen2-7b-q4_k_m.head.gguf", 4622261440);
  CHECK_THROWS_WITH(
      attn::CheckpointImport(large.files(), attn::checkpoint_config_for(large.files(), {})),
      ContainsSubstring(
          "this checkpoint is too large for the tab: 7070619136 parameters need 4693 MB") &&
          ContainsSubstring("GGUF's quantized weights in their blocks"));
}

TEST_CASE("GGUF files loadCheckpoint cannot read are refused, saying why", "[gguf]") {
  const std::string dir = std::string(ATTN_TEST_DATA_DIR) + "/malformed-gguf/";
  const Bytes listing = read_file(dir + "expected.json");
  const attn::json::Value doc = attn::json::parse(std::string(listing.begin(), listing.end()));
  REQUIRE(doc.object()->size() >= 15);
  for (const attn::json::Member& entry : *doc.object()) {
    INFO(entry.key);
    const Bytes bytes = read_file(dir + entry.key);
    CHECK_THROWS_WITH(attn::load_gguf_checkpoint(bytes), ContainsSubstring(*entry.value.string()));
  }
  // and the import works after
  CHECK(attn::load_gguf_checkpoint(gguf_file("llama-f32.gguf"))->config().layers == 2);
}

TEST_CASE("each family read from GGUF names its tensors as llama.cpp does", "[gguf]") {
  CHECK(attn::gguf_architecture_names() ==
        "gpt2, llama, qwen2, gptneox, qwen3, gemma2, gemma3, phi3");
  CHECK(attn::family_of_gguf_architecture("llama") == &attn::llama_family());
  CHECK(attn::family_of_gguf_architecture("qwen3") == &attn::qwen3_family());
  CHECK(attn::family_of_gguf_architecture("gptneox") == &attn::gpt_neox_family());
  CHECK(attn::family_of_gguf_architecture("gemma2") == &attn::gemma2_family());
  CHECK(attn::family_of_gguf_architecture("gemma3") == &attn::gemma3_text_family());
  CHECK(attn::family_of_gguf_architecture("gemma") == nullptr);
  CHECK(attn::family_of_gguf_architecture("olmo2") == nullptr);
  // a family read from GGUF has a GGUF name for every one of its tensors
  for (const attn::FamilyDescription* family : attn::families()) {
    if (family->gguf.architecture.empty()) continue;
    INFO(family->family);
    CHECK(attn::gguf_view(*family).tensors.size() == family->tensors.size());
  }
  const attn::FamilyDescription view = attn::gguf_view(attn::gpt2_family());
  const auto qkv = attn::match_tensor(view, "blk.3.attn_qkv.weight");
  REQUIRE(qkv);
  CHECK(qkv->ours == "layers.3.attn.in_proj_weight");
  CHECK(qkv->tensor->layout == attn::StoredLayout::AsIs);  // written [out, in]
  CHECK(qkv->tensor->shape == std::vector{attn::Dim::DModel3, attn::Dim::DModel});
  const attn::FamilyDescription llama = attn::gguf_view(attn::llama_family());
  CHECK(attn::match_tensor(llama, "blk.0.attn_k.weight")->tensor->layout ==
        attn::StoredLayout::RopeInterleaved);
  CHECK(attn::match_tensor(attn::gguf_view(attn::qwen2_family()), "blk.0.attn_k.weight")
            ->tensor->layout == attn::StoredLayout::AsIs);
  // GPT-NeoX's fused q|k|v regrouped by the converter: our in_proj's rows as they are
  const attn::FamilyDescription neox_view = attn::gguf_view(attn::gpt_neox_family());
  const auto neox = attn::match_tensor(neox_view, "blk.1.attn_qkv.bias");  // points into neox_view
  REQUIRE(neox);
  CHECK(neox->ours == "layers.1.attn.in_proj_bias");
  CHECK(neox->tensor->layout == attn::StoredLayout::AsIs);
  // Gemma's norms, stored 1 + w; Gemma 3's q/k norms too; Gemma 2 has none
  const attn::FamilyDescription gemma3 = attn::gguf_view(attn::gemma3_text_family());
  for (const char* name :
       {"blk.0.attn_norm.weight", "blk.0.attn_post_norm.weight", "blk.0.ffn_norm.weight",
        "blk.0.ffn_post_norm.weight", "blk.0.attn_q_norm.weight", "output_norm.weight"}) {
    INFO(name);
    REQUIRE(attn::match_tensor(gemma3, name));
    CHECK(attn::match_tensor(gemma3, name)->tensor->layout == attn::StoredLayout::PlusOne);
  }
  CHECK(attn::match_tensor(gemma3, "blk.0.ffn_norm.weight")->ours == "layers.0.ln2.weight");
  CHECK(attn::match_tensor(gemma3, "blk.0.attn_post_norm.weight")->ours ==
        "layers.0.ln1_post.weight");
  CHECK_FALSE(
      attn::match_tensor(attn::gguf_view(attn::gemma2_family()), "blk.0.attn_q_norm.weight"));
}
