// libFuzzer target for the .safetensors reader and AttentionLayer::load_safetensors, built with
// -fsanitize=fuzzer,address,undefined by the `fuzz` preset and run by npm test (scripts/test.sh)
// for a bounded time from tests/fuzz/seeds/ and the malformed corpus tests/data/malformed/.
//
// Any input may be refused, but only with attn::Error: another exception escaping, a sanitizer
// report, or a broken invariant below (abort) is a finding. For every input the target
//   1. parses the bytes; if they parse, reads every tensor with the reader of its dtype, checks
//      the sizes against the shapes, and checks that writing the tensors back and parsing the
//      result gives the same tensors, values and metadata;
//   2. loads the bytes into a layer shaped like the file's in_proj_weight (so well-formed files
//      reach the weight checks) and, when they load, runs a small forward with them, which must
//      either be refused with attn::Error or return finite outputs and softmax rows summing to 1;
//   3. imports the bytes as a Hugging Face GPT-2 checkpoint (attn::load_gpt2_checkpoint) for the
//      config of tests/data/malformed-gpt2/ and tests/fuzz/seeds-gpt2/ (2 layers, 2 heads,
//      n_embd 8, vocab 16, 8 positions) and, when it loads, runs a forward: finite logits and
//      causal attention rows summing to 1.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/io/safetensors.hpp"
#include "attention/layer/layer.hpp"
#include "attention/model/checkpoint_import.hpp"
#include "attention/model/families/gpt2.hpp"

namespace st = attn::safetensors;

namespace {

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz_safetensors: invariant broken: %s\n", what.c_str());
  std::abort();
}

// The tensor's bytes through the reader of its dtype (the values compared bit for bit).
std::vector<std::uint8_t> tensor_bytes(const st::File& file, const st::TensorInfo& tensor) {
  std::vector<std::uint8_t> bytes;
  const auto copy = [&bytes](const auto& values) {
    bytes.resize(values.size() * sizeof(values[0]));
    if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return values.size();
  };
  std::size_t count = 0;
  switch (tensor.dtype) {
    case st::DType::F32:
      count = copy(file.f32(tensor.name));
      break;
    case st::DType::F64:
      count = copy(file.f64(tensor.name));
      break;
    case st::DType::U8:
    case st::DType::Bool:  // one byte per value: read by the reader of its dtype
      count = copy(tensor.dtype == st::DType::U8 ? file.u8(tensor.name) : file.bools(tensor.name));
      break;
    case st::DType::F16:
    case st::DType::BF16: {
      const auto raw = file.raw(tensor);
      bytes.assign(raw.begin(), raw.end());
      count = file.as_f32(tensor.name).size();
      break;
    }
  }
  if (count != tensor.element_count()) broken("tensor '" + tensor.name + "' read the wrong count");
  if (bytes.size() != tensor.end - tensor.begin) broken("tensor '" + tensor.name + "' byte range");
  return bytes;
}

void check_parsed(const st::File& file) {
  std::vector<st::TensorToWrite> tensors;
  for (const st::TensorInfo& tensor : file.tensors()) {
    if (tensor.begin > tensor.end) broken("begin > end");
    tensors.push_back({tensor.name, tensor.dtype, tensor.shape, tensor_bytes(file, tensor)});
  }
  // Anything the reader accepts, the writer writes, and reading that gives the same again.
  std::vector<std::uint8_t> written;
  try {
    written = st::write(tensors, file.metadata());
  } catch (const attn::Error& error) {
    broken(std::string("the writer refused what the reader accepted: ") + error.what());
  }
  const st::File again = st::File::parse(written);  // throws attn::Error (a finding) if refused
  if (again.metadata() != file.metadata()) broken("metadata changed in a round trip");
  if (again.tensors().size() != tensors.size()) broken("tensor count changed in a round trip");
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const st::TensorInfo& info = again.tensors()[i];
    if (info.name != tensors[i].name || info.dtype != tensors[i].dtype ||
        info.shape != tensors[i].shape || tensor_bytes(again, info) != tensors[i].bytes) {
      broken("tensor '" + tensors[i].name + "' changed in a round trip");
    }
  }
}

// A layer the file could fit: d_model from in_proj_weight [3·d, d] (up to 64), else the corpus'
// d_model 4; biases and W_O as the file has them.
attn::LayerConfig config_for(const std::optional<st::File>& file) {
  attn::LayerConfig config;
  config.d_model = 4;
  config.heads = 2;
  config.seed = 1;
  if (!file || !file->contains("in_proj_weight")) return config;
  const auto& shape = file->info("in_proj_weight").shape;
  if (shape.size() == 2 && shape[1] >= 1 && shape[1] <= 64 && shape[0] == 3 * shape[1]) {
    config.d_model = shape[1];
    config.heads = config.d_model % 2 == 0 ? 2 : 1;
  }
  config.bias = file->contains("in_proj_bias") || file->contains("out_proj.bias");
  config.out_proj = file->contains("out_proj.weight");
  return config;
}

void check_layer(std::span<const std::uint8_t> bytes, const attn::LayerConfig& config) {
  attn::AttentionLayer layer(config);
  try {
    layer.load_safetensors(bytes);
  } catch (const attn::Error&) {
    return;
  }
  std::vector<float> x(3 * config.d_model);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 5) - 2.0f;
  attn::ForwardOptions options;
  options.n = 3;
  options.mask.kind = attn::MaskKind::Causal;
  const attn::ForwardResult* result = nullptr;
  try {
    result = &layer.forward(x, options);
  } catch (const attn::Error&) {
    return;  // e.g. weights so large that float32 could overflow: refused with a message
  }
  // A forward that runs returns finite numbers, and each softmax row sums to 1 (causal: every
  // query sees at least itself).
  const float* output = result->output.data();
  for (std::size_t i = 0; i < result->output.size(); ++i) {
    if (!std::isfinite(output[i])) broken("a non-finite output from finite inputs and weights");
  }
  for (std::size_t row = 0; row + 3 <= result->attention.size(); row += 3) {
    float sum = 0.0f;
    for (std::size_t j = 0; j < 3; ++j) sum += result->attention[row + j];
    if (!(std::abs(sum - 1.0f) <= 1e-4f)) broken("a softmax row does not sum to 1");
  }
}

void check_gpt2(std::span<const std::uint8_t> bytes) {
  const attn::Gpt2Config config{
      .n_layer = 2, .n_head = 2, .n_embd = 8, .n_positions = 8, .vocab_size = 16};
  std::unique_ptr<attn::Model> model;
  try {
    model = attn::load_gpt2_checkpoint(bytes, config);
  } catch (const attn::Error&) {
    return;
  }
  const std::vector<std::int32_t> ids = {1, 5, 15, 0};
  attn::ModelOutput out;
  try {
    out = model->forward(ids, 1, ids.size());
  } catch (const attn::Error&) {
    return;
  }
  for (const float value : out.logits) {
    if (!std::isfinite(value)) broken("a non-finite GPT-2 logit from finite weights");
  }
  for (const auto& layer : out.attention) {
    for (std::size_t row = 0; row + 4 <= layer.size(); row += 4) {
      float sum = 0.0f;
      for (std::size_t j = 0; j < 4; ++j) sum += layer[row + j];
      if (!(std::abs(sum - 1.0f) <= 1e-4f)) broken("a GPT-2 attention row does not sum to 1");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  std::optional<st::File> file;
  try {
    file = st::File::parse(bytes);
  } catch (const attn::Error&) {
  }
  if (file) check_parsed(*file);
  check_layer(bytes, config_for(file));
  check_gpt2(bytes);
  return 0;
}
