// pytorch_model.bin through torch_checkpoint: every file torch.save wrote (tests/data/torch/, by
// scripts/data/make-torch-bin.py) gives the same tensors, bit for bit, as its .safetensors twin;
// the streamed path (tail → directory → data.pkl → each storage's span in pieces) gives what the
// whole-file path gives; every hostile file (tests/data/malformed-torch/) is refused with the
// message expected.json lists, and a normal load works right after.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/io/pickle.hpp"
#include "attention/io/safetensors.hpp"
#include "attention/io/torch_checkpoint.hpp"
#include "attention/io/zip.hpp"
#include "test_support.hpp"

using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;
namespace tc = attn::torch_checkpoint;
namespace st = attn::safetensors;
using attn::pickle::DType;

namespace {

const std::string kValidDir = std::string(ATTN_TEST_DATA_DIR) + "/torch/";
const std::string kHostileDir = std::string(ATTN_TEST_DATA_DIR) + "/malformed-torch/";

std::vector<std::string> valid_cases() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kValidDir)) {
    if (entry.path().extension() == ".bin") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

st::File read_twin(const std::string& name) {
  st::Limits limits;
  limits.max_tensors = 2048;  // many-tensors has 1100
  return st::File::parse(read_file(kValidDir + name + ".safetensors"), limits);
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
}

// The twin's layout of a tensor: its own dtype, or U8 with a trailing byte dimension for I64/I32.
void check_against_twin(const tc::FileView& file, const tc::TensorSource& tensor,
                        const st::File& twin) {
  INFO("tensor " << tensor.name);
  REQUIRE(twin.contains(tensor.name));
  const st::TensorInfo& expected = twin.info(tensor.name);
  std::vector<std::size_t> shape(tensor.shape.begin(), tensor.shape.end());
  if (const auto dtype = tc::safetensors_dtype(tensor.dtype)) {
    CHECK(expected.dtype == *dtype);
  } else {
    CHECK(expected.dtype == st::DType::U8);
    shape.push_back(attn::pickle::dtype_size(tensor.dtype));
  }
  CHECK(expected.shape == shape);
  const std::vector<std::uint8_t> raw = file.raw(tensor);
  const auto twin_raw = twin.raw(expected);
  CHECK(std::vector<std::uint8_t>(twin_raw.begin(), twin_raw.end()) == raw);
  const bool floating = tensor.dtype == DType::F32 || tensor.dtype == DType::F64 ||
                        tensor.dtype == DType::F16 || tensor.dtype == DType::BF16;
  if (floating) CHECK(same_bits(file.f32(tensor), twin.as_f32(tensor.name)));
}

// What the streamed path gives: the tail, the directory, data.pkl's span, each storage's span
// read in pieces; contiguous tensors converted piece by piece, others gathered from a window of
// exactly their bytes.
struct Streamed {
  tc::Checkpoint checkpoint;
  std::vector<std::vector<float>> values;        // floating tensors, else empty
  std::vector<std::vector<std::uint8_t>> bytes;  // every tensor's raw values
};

std::span<const std::uint8_t> range(const std::vector<std::uint8_t>& file, std::uint64_t begin,
                                    std::uint64_t end) {
  REQUIRE(begin <= end);
  REQUIRE(end <= file.size());
  return std::span<const std::uint8_t>(file).subspan(begin, end - begin);
}

Streamed stream(const std::vector<std::uint8_t>& file) {
  const std::uint64_t size = file.size();
  tc::check_magic(range(file, 0, std::min<std::uint64_t>(size, tc::kMagicBytes)));
  const auto tail = range(file, size - attn::zip::tail_bytes_needed(size), size);
  const attn::zip::DirectoryLocation location = attn::zip::locate_directory(tail, size);
  const attn::zip::Directory directory = attn::zip::parse_directory(
      range(file, location.offset, location.offset + location.size), location, size);
  // A span's head: its first 4 KB (or all of it), enough for torch's local headers.
  const auto head = [&](const attn::zip::Entry& entry) {
    return range(file, entry.local_header_offset,
                 entry.local_header_offset + std::min<std::uint64_t>(entry.span_size(), 4096));
  };
  const attn::zip::Entry& pickle = tc::pickle_entry(directory);
  const std::uint64_t pickle_start =
      pickle.local_header_offset + attn::zip::data_start(pickle, head(pickle));
  if (const attn::zip::Entry* byteorder = tc::byteorder_entry(directory)) {
    const std::uint64_t start =
        byteorder->local_header_offset + attn::zip::data_start(*byteorder, head(*byteorder));
    tc::check_byteorder(range(file, start, start + byteorder->size));
  }
  Streamed out;
  out.checkpoint = tc::describe(directory, range(file, pickle_start, pickle_start + pickle.size));
  for (const tc::TensorSource& tensor : out.checkpoint.tensors) {
    const tc::StorageSource& storage = out.checkpoint.storages[tensor.storage];
    const attn::zip::Entry& entry = directory.entries[storage.entry];
    REQUIRE(storage.span_begin == entry.local_header_offset);
    REQUIRE(storage.span_end == entry.span_end);
    const std::uint64_t data = storage.span_begin + attn::zip::data_start(entry, head(entry));
    const std::size_t value_size = attn::pickle::dtype_size(tensor.dtype);
    std::vector<std::uint8_t> raw(tensor.value_bytes());
    std::vector<float> values;
    const bool floating = tc::safetensors_dtype(tensor.dtype) && tensor.dtype != DType::U8 &&
                          tensor.dtype != DType::Bool;
    if (floating) values.resize(tensor.element_count);
    if (tensor.contiguous) {
      const std::uint64_t piece = 3 * value_size;  // three values at a time
      for (std::uint64_t at = tensor.byte_begin; at < tensor.byte_end; at += piece) {
        const auto chunk = range(file, data + at, data + std::min(at + piece, tensor.byte_end));
        std::copy(chunk.begin(), chunk.end(), raw.begin() + (at - tensor.byte_begin));
        if (floating) {
          tc::convert_to_f32(tensor.dtype, chunk,
                             std::span<float>(values).subspan((at - tensor.byte_begin) / value_size,
                                                              chunk.size() / value_size));
        }
      }
    } else {
      const auto window = range(file, data + tensor.byte_begin, data + tensor.byte_end);
      tc::gather_raw(tensor, window, tensor.byte_begin, raw);
      if (floating) tc::gather_f32(tensor, window, tensor.byte_begin, values);
    }
    out.values.push_back(std::move(values));
    out.bytes.push_back(std::move(raw));
  }
  return out;
}

}  // namespace

TEST_CASE("every torch.save file reads bit-identical to its .safetensors twin", "[torch]") {
  const std::vector<std::string> cases = valid_cases();
  CHECK(cases.size() >= 10);
  for (const std::string& name : cases) {
    INFO("case " << name);
    const std::vector<std::uint8_t> bytes = read_file(kValidDir + name + ".bin");
    const tc::FileView file = tc::FileView::parse(bytes);
    const st::File twin = read_twin(name);
    REQUIRE(file.checkpoint().tensors.size() == twin.tensors().size());
    for (std::size_t i = 0; i < twin.tensors().size(); ++i) {
      CHECK(file.checkpoint().tensors[i].name == twin.tensors()[i].name);  // the dict's order
      check_against_twin(file, file.checkpoint().tensors[i], twin);
    }
  }
}

TEST_CASE("the model state dicts keep their views, ties, buffers and dtypes", "[torch]") {
  const std::pair<const char*, DType> dtypes[] = {
      {"f32", DType::F32}, {"f16", DType::F16}, {"bf16", DType::BF16}, {"f64", DType::F64}};
  for (const auto& [name, dtype] : dtypes) {
    INFO("case " << name);
    const std::vector<std::uint8_t> bytes = read_file(kValidDir + name + ".bin");
    const tc::FileView file = tc::FileView::parse(bytes);
    const auto& t = [&](const char* tensor) -> const tc::TensorSource& {
      return file.tensor(tensor);
    };
    CHECK(t("embed.weight").dtype == dtype);
    // Tied: lm_head.weight is embed.weight's storage, whole.
    CHECK(t("lm_head.weight").storage == t("embed.weight").storage);
    CHECK(t("lm_head.weight").storage_offset == 0);
    // A view of rows 4..8 of qkv.weight [12, 4]: offset 16, contiguous.
    CHECK(t("k_proj.weight").storage == t("qkv.weight").storage);
    CHECK(t("k_proj.weight").storage_offset == 16);
    CHECK(t("k_proj.weight").contiguous);
    CHECK(t("k_proj.weight").byte_begin == 16 * attn::pickle::dtype_size(dtype));
    // Its transpose and every other column: non-contiguous, gathered.
    CHECK(t("qkv_transposed").strides == std::vector<std::uint64_t>{1, 4});
    CHECK_FALSE(t("qkv_transposed").contiguous);
    CHECK(t("qkv_even_columns").strides == std::vector<std::uint64_t>{4, 2});
    CHECK_FALSE(t("qkv_even_columns").contiguous);
    CHECK(t("expanded").strides == std::vector<std::uint64_t>{0, 1});
    CHECK(t("scale").shape.empty());
    CHECK(t("scale").element_count == 1);
    CHECK(t("empty").element_count == 0);
    CHECK(t("position_ids").dtype == DType::I64);
    CHECK(t("causal_mask").dtype == DType::Bool);
    // One storage per distinct tensor storage: embed (tied), qkv (+ views), qkv.bias, norm
    // weight and bias, the buffers, scale, empty, expanded.
    CHECK(file.checkpoint().storages.size() == 10);
  }
  // The archive folder is the file's name, pytorch_model as Hugging Face saves, or "archive".
  CHECK(tc::FileView::parse(read_file(kValidDir + "f32.bin")).checkpoint().archive == "f32");
  CHECK(tc::FileView::parse(read_file(kValidDir + "f16.bin")).checkpoint().archive ==
        "pytorch_model");
  CHECK(tc::FileView::parse(read_file(kValidDir + "bf16.bin")).checkpoint().archive == "archive");
  // The ZIP64 copy: every size and offset came from ZIP64 fields, and nothing else changed.
  const auto zip64 = read_file(kValidDir + "f32-zip64.bin");
  CHECK(tc::FileView::parse(zip64).directory().location.zip64);
}

TEST_CASE("the streamed path (tail, directory, spans in pieces) equals the whole-file path",
          "[torch]") {
  for (const std::string& name : valid_cases()) {
    INFO("case " << name);
    const std::vector<std::uint8_t> bytes = read_file(kValidDir + name + ".bin");
    const tc::FileView file = tc::FileView::parse(bytes);
    const Streamed streamed = stream(bytes);
    REQUIRE(streamed.checkpoint.tensors.size() == file.checkpoint().tensors.size());
    CHECK(streamed.checkpoint.storages.size() == file.checkpoint().storages.size());
    for (std::size_t i = 0; i < streamed.checkpoint.tensors.size(); ++i) {
      const tc::TensorSource& tensor = file.checkpoint().tensors[i];
      INFO("tensor " << tensor.name);
      CHECK(streamed.checkpoint.tensors[i].name == tensor.name);
      CHECK(streamed.bytes[i] == file.raw(tensor));
      if (!streamed.values[i].empty()) CHECK(same_bits(streamed.values[i], file.f32(tensor)));
    }
  }
}

TEST_CASE("expected.json lists exactly the files of tests/data/malformed-torch/", "[torch]") {
  std::set<std::string> files, listed;
  for (const auto& entry : fs::directory_iterator(kHostileDir)) {
    if (entry.path().extension() == ".bin") files.insert(entry.path().filename().string());
  }
  for (const auto& [name, message] : read_json_string_map(kHostileDir + "expected.json")) {
    listed.insert(name);
    CHECK_FALSE(message.empty());
  }
  CHECK(listed == files);
  CHECK(listed.size() >= 40);
}

TEST_CASE("every hostile checkpoint is refused with its message, and loads work after", "[torch]") {
  const std::vector<std::uint8_t> good = read_file(kValidDir + "f32.bin");
  double slowest = 0;
  std::string slowest_name;
  for (const auto& [name, message] : read_json_string_map(kHostileDir + "expected.json")) {
    INFO(name << ": expected \"" << message << "\"");
    const std::vector<std::uint8_t> bytes = read_file(kHostileDir + name);
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_AS(tc::FileView::parse(bytes), attn::Error);
    CHECK_THROWS_WITH(tc::FileView::parse(bytes), ContainsSubstring(message));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 2;
    if (seconds > slowest) {
      slowest = seconds;
      slowest_name = name;
    }
    // The reader keeps no state: a good file loads right after.
    const tc::FileView file = tc::FileView::parse(good);
    CHECK(file.f32(file.tensor("k_proj.weight")).size() == 16);
  }
  WARN("slowest refusal: " << slowest_name << " in " << slowest * 1e3 << " ms");
}

TEST_CASE("check_magic names the legacy format from the first bytes alone", "[torch]") {
  const auto legacy = read_file(kHostileDir + "legacy-format.bin");
  CHECK_THROWS_WITH(tc::check_magic(std::span(legacy).first(tc::kMagicBytes)),
                    ContainsSubstring("re-save it with torch >= 1.6"));
  // A streamed load finds no end record in a legacy file; its first bytes give the reason.
  CHECK_THROWS_WITH(attn::zip::locate_directory(legacy, legacy.size()),
                    ContainsSubstring("no end of central directory record"));
  const auto good = read_file(kValidDir + "f32.bin");
  CHECK_NOTHROW(tc::check_magic(std::span(good).first(tc::kMagicBytes)));
}

TEST_CASE("gathering checks its window and its output", "[torch]") {
  const auto bytes = read_file(kValidDir + "f32.bin");
  const tc::FileView file = tc::FileView::parse(bytes);
  const tc::TensorSource& view = file.tensor("k_proj.weight");  // bytes [64, 128) of qkv's data
  const auto data = file.storage_data(view.storage);
  std::vector<float> out(view.element_count);
  // A window of exactly its bytes, or the whole data, gives the same values.
  tc::gather_f32(view, data.subspan(64, 64), 64, out);
  CHECK(same_bits(out, file.f32(view)));
  CHECK_THROWS_WITH(
      tc::gather_f32(view, data.subspan(64, 60), 64, out),
      ContainsSubstring("needs bytes [64, 128) of its storage's data, given [64, 124)"));
  CHECK_THROWS_WITH(tc::gather_f32(view, data.subspan(68, 60), 68, out),
                    ContainsSubstring("needs bytes [64, 128)"));
  std::vector<float> short_out(3);
  CHECK_THROWS_WITH(tc::gather_f32(view, data, 0, short_out),
                    ContainsSubstring("has 16 values, 3 values were asked for"));
  const tc::TensorSource& ids = file.tensor("position_ids");
  std::vector<float> ids_out(ids.element_count);
  CHECK_THROWS_WITH(tc::gather_f32(ids, file.storage_data(ids.storage), 0, ids_out),
                    ContainsSubstring("is I64, not floating point"));
  CHECK_THROWS_WITH(tc::convert_to_f32(DType::I64, {}, {}),
                    ContainsSubstring("a I64 tensor is not floating point"));
  CHECK(file.raw(ids).size() == 64);
}
