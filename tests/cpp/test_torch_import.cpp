// pytorch_model.bin through the checkpoint import: every model case of tests/data/torch/models
// (torch.save of the model test checkpoints, with shared storages, views with an offset and
// non-contiguous strides, and a sharded pair) loads into a Model bit-identical to its
// .safetensors twin, whole and streamed in odd chunks; the import never asks for a whole file
// before the tensors; hostile and legacy files are refused with their message, and a load works
// right after.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/io/json.hpp"
#include "attention/model/checkpoint_files.hpp"
#include "attention/model/checkpoint_import.hpp"
#include "test_support.hpp"

using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(ATTN_TEST_DATA_DIR) + "/";
const std::string kModels = kData + "torch/models/";

struct ModelCase {
  std::string name;
  std::vector<std::string> bins;
  std::string safetensors;
  std::string config;
};

std::string text_of(const std::string& path) {
  const auto bytes = read_file(path);
  return std::string(bytes.begin(), bytes.end());
}

// tests/data/torch/models/cases.json (written by scripts/data/make-torch-bin.py).
std::vector<ModelCase> model_cases() {
  const attn::json::Value cases = attn::json::parse(text_of(kModels + "cases.json"));
  std::vector<ModelCase> out;
  for (const attn::json::Value& each : *cases.array()) {
    ModelCase c;
    for (const attn::json::Member& member : *each.object()) {
      if (member.key == "name") c.name = *member.value.string();
      if (member.key == "safetensors") c.safetensors = *member.value.string();
      if (member.key == "config") c.config = *member.value.string();
      if (member.key == "bin") {
        for (const auto& file : *member.value.array()) c.bins.push_back(*file.string());
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

attn::CheckpointConfig config_of(const ModelCase& c) {
  return attn::checkpoint_config(attn::ConfigJson(text_of(kData + c.config)));
}

std::vector<std::vector<std::uint8_t>> bin_files(const ModelCase& c) {
  std::vector<std::vector<std::uint8_t>> files;
  for (const std::string& bin : c.bins) files.push_back(read_file(kModels + bin));
  return files;
}

std::vector<std::span<const std::uint8_t>> spans_of(
    const std::vector<std::vector<std::uint8_t>>& files) {
  return {files.begin(), files.end()};
}

// The import of a one-file case `c` whose bytes are `files`: described from the file, read by its
// config.json.
attn::CheckpointImport import_of(const ModelCase& c,
                                 const std::vector<std::vector<std::uint8_t>>& files) {
  return attn::CheckpointImport(attn::describe_checkpoint_files(spans_of(files), {files[0].size()}),
                                config_of(c));
}

// Every parameter's values (2-byte ones widened, which is exact) and a forward's logits, bit for
// bit.
void require_identical(attn::Model& a, attn::Model& b) {
  REQUIRE(a.parameter_table().size() == b.parameter_table().size());
  for (const attn::ParameterInfo& info : a.parameter_table()) {
    INFO(info.name);
    const auto x = a.parameter_values(info.name), y = b.parameter_values(info.name);
    REQUIRE(x.size() == y.size());
    CHECK(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
  }
  std::vector<std::int32_t> ids;
  for (std::size_t i = 0; i < 8; ++i) ids.push_back(std::int32_t((i * 7 + 3) % a.config().vocab));
  const auto la = a.forward(ids, 1, ids.size()).logits;
  const std::vector<float> first(la.begin(), la.end());
  const auto lb = b.forward(ids, 1, ids.size()).logits;
  REQUIRE(first.size() == lb.size());
  CHECK(std::memcmp(first.data(), lb.data(), first.size() * sizeof(float)) == 0);
}

// The streamed protocol as the JS API runs it, from bytes in memory: the ranges CheckpointFiles
// asks for (their bytes counted), then each read in `chunk`-byte pieces (whole when it must be).
std::unique_ptr<attn::Model> streamed(const std::vector<std::vector<std::uint8_t>>& files,
                                      const attn::CheckpointConfig& config, std::size_t chunk,
                                      std::uint64_t* described_bytes = nullptr) {
  std::vector<std::uint64_t> sizes;
  for (const auto& file : files) sizes.push_back(file.size());
  attn::CheckpointFiles described(sizes);
  std::uint64_t asked = 0;
  while (!described.ready()) {
    std::vector<std::span<const std::uint8_t>> bytes;
    for (const attn::ByteRange& range : described.needed()) {
      bytes.push_back(std::span<const std::uint8_t>(files[range.file])
                          .subspan(std::size_t(range.begin), std::size_t(range.end - range.begin)));
      // the end records' window (the last 64 KB and more, the whole of a small file) aside
      const std::uint64_t size = files[range.file].size();
      const bool tail =
          range.end == size && range.begin == size - attn::zip::tail_bytes_needed(size);
      if (!tail) asked += range.end - range.begin;
    }
    described.provide(bytes);
  }
  if (described_bytes) *described_bytes = asked;
  attn::CheckpointImport import(described.files(), config);
  for (std::size_t i = 0; i < import.reads().size(); ++i) {
    const attn::CheckpointRead& where = import.reads()[i];
    const std::size_t total = std::size_t(where.end - where.begin);
    const std::size_t step = import.needs_whole(i) ? total : chunk;
    for (std::size_t at = 0; at < total; at += step) {
      import.read(i,
                  std::span<const std::uint8_t>(files[where.file])
                      .subspan(std::size_t(where.begin) + at, std::min(step, total - at)),
                  at);
    }
  }
  return import.finish();
}

}  // namespace

TEST_CASE("every pytorch_model.bin model case loads bit-identical to its .safetensors twin",
          "[torch][checkpoint]") {
  const auto cases = model_cases();
  REQUIRE(cases.size() >= 5);
  for (const ModelCase& c : cases) {
    INFO(c.name);
    const auto config = config_of(c);
    const auto files = bin_files(c);
    const auto twin = read_file(kData + c.safetensors);
    const auto expected = attn::load_checkpoint({twin}, config);
    const auto whole = attn::load_checkpoint(spans_of(files), config);
    require_identical(*whole, *expected);
    // 7-byte chunks: local headers and values split between chunks
    std::uint64_t described = 0;
    const auto pieces = streamed(files, config, 7, &described);
    require_identical(*pieces, *expected);
    const auto large = streamed(files, config, 1 << 22);
    require_identical(*large, *expected);
    // Described from the end records, the directory and data.pkl: beside the end records' window,
    // far less than the files.
    std::uint64_t total = 0;
    for (const auto& file : files) total += file.size();
    CHECK(described < total / 2);
  }
}

TEST_CASE("the model cases hold the layouts they are for", "[torch][checkpoint]") {
  // gpt2-tiny-f32: non-contiguous c_attn (read whole) and lm_head sharing wte's storage
  ModelCase gpt2{
      "gpt2", {"gpt2-tiny-f32.bin"}, "gpt2/tiny-f32.safetensors", "gpt2/tiny-f32.config.json"};
  const auto gpt2_files = bin_files(gpt2);
  attn::CheckpointImport a = import_of(gpt2, gpt2_files);
  std::size_t whole = 0;
  std::map<std::string, std::uint64_t> begins;
  for (std::size_t i = 0; i < a.reads().size(); ++i) {
    whole += a.needs_whole(i);
    begins[a.reads()[i].name] = a.reads()[i].begin;
  }
  CHECK(whole >= 2);  // transposed Conv1D weights, read whole
  CHECK(begins.at("lm_head.weight") == begins.at("transformer.wte.weight"));
  // llama-bf16: q/k/v views of one storage (offsets), o_proj of layer 0 gathered
  ModelCase llama{
      "llama", {"llama-bf16.bin"}, "llama/llama-bf16.safetensors", "llama/llama-bf16.config.json"};
  const auto llama_files = bin_files(llama);
  attn::CheckpointImport b = import_of(llama, llama_files);
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < b.reads().size(); ++i) index[b.reads()[i].name] = i;
  const auto at = [&](const std::string& name) { return b.reads()[index.at(name)].begin; };
  CHECK(at("model.layers.1.self_attn.q_proj.weight") ==
        at("model.layers.1.self_attn.v_proj.weight"));
  CHECK(b.needs_whole(index.at("model.layers.0.self_attn.o_proj.weight")));
  CHECK_FALSE(b.needs_whole(index.at("model.layers.0.self_attn.k_proj.weight")));
}

TEST_CASE("a pytorch_model.bin read in the wrong order or cut short is refused",
          "[torch][checkpoint]") {
  ModelCase c{
      "gpt2", {"gpt2-tiny-f16.bin"}, "gpt2/tiny-f16.safetensors", "gpt2/tiny-f16.config.json"};
  const auto files = bin_files(c);
  attn::CheckpointImport import = import_of(c, files);
  const auto file = std::span<const std::uint8_t>(files[0]);
  std::size_t streamed_index = 0;
  while (import.needs_whole(streamed_index)) ++streamed_index;
  const attn::CheckpointRead& where = import.reads()[streamed_index];
  CHECK_THROWS_WITH(import.read(streamed_index, file.subspan(std::size_t(where.begin) + 4, 8), 4),
                    ContainsSubstring("in order from byte 0, got 8 at byte 4"));
  // A storage whose local header is not where the directory says.
  std::vector<std::uint8_t> broken = files[0];
  broken[std::size_t(where.begin)] = 'X';
  attn::CheckpointImport moved(attn::describe_checkpoint_files({broken}, {broken.size()}),
                               config_of(c));
  CHECK_THROWS_WITH(moved.read(streamed_index,
                               std::span<const std::uint8_t>(broken).subspan(
                                   std::size_t(where.begin), std::size_t(where.end - where.begin)),
                               0),
                    ContainsSubstring("has no local header at byte"));
  // Not every tensor read
  CHECK_THROWS_WITH(import.finish(), ContainsSubstring("was not read whole"));
}

TEST_CASE("hostile and legacy pytorch_model.bin files are refused through the import",
          "[torch][checkpoint]") {
  const std::string dir = kData + "malformed-torch/";
  ModelCase good{
      "gpt2", {"gpt2-tiny-f16.bin"}, "gpt2/tiny-f16.safetensors", "gpt2/tiny-f16.config.json"};
  const auto config = config_of(good);
  // Where the import's message differs from the torch reader's, and why:
  const std::map<std::string, std::string> through_import = {
      // found only when a storage's own entry is read: the import refuses the file's tensors
      // first (one 'x' tensor, no GPT-2 layer); the test above reads a moved local header
      {"zip-local-name-disagrees.bin",
       "config.json says n_layer 2 but the checkpoint has 0 layers"},
      {"zip-local-size-disagrees.bin",
       "config.json says n_layer 2 but the checkpoint has 0 layers"},
      // neither a zip nor a pickle by their first bytes: read as .safetensors, whose message it is
      {"empty.bin", "safetensors: file is 0 bytes long, too short for the 8-byte header length"},
      {"not-a-zip.bin", "safetensors: header length says 559903 bytes but the file has only 56"}};
  std::size_t checked = 0;
  for (const auto& [name, message] : read_json_string_map(dir + "expected.json")) {
    INFO(name);
    const auto bytes = read_file(dir + name);
    const auto other = through_import.find(name);
    CHECK_THROWS_WITH(attn::load_checkpoint({bytes}, config),
                      ContainsSubstring(other == through_import.end() ? message : other->second));
    ++checked;
  }
  CHECK(checked >= 40);
  CHECK_THROWS_WITH(attn::load_checkpoint({read_file(dir + "legacy-format.bin")}, config),
                    ContainsSubstring("the legacy PyTorch format (torch.save before torch 1.6"));
  // A shard of each format together is read too; a legacy shard is named.
  const auto files = bin_files(good);
  CHECK_THROWS_WITH(attn::load_checkpoint({files[0], read_file(dir + "legacy-format.bin")}, config),
                    ContainsSubstring("legacy PyTorch format"));
  // The import works right after.
  const auto model = attn::load_checkpoint(spans_of(files), config);
  const auto expected = attn::load_checkpoint({read_file(kData + good.safetensors)}, config);
  require_identical(*model, *expected);
}

TEST_CASE("the model cases' index lists their shards", "[torch][checkpoint]") {
  const attn::json::Value index =
      attn::json::parse(text_of(kModels + "llama-f32-sharded.bin.index.json"));
  std::set<std::string> shards;
  for (const attn::json::Member& member : *index.object()) {
    if (member.key != "weight_map") continue;
    for (const attn::json::Member& entry : *member.value.object()) {
      shards.insert(*entry.value.string());
    }
  }
  CHECK(shards == std::set<std::string>{"llama-f32-sharded-00001-of-00002.bin",
                                        "llama-f32-sharded-00002-of-00002.bin"});
}
