// Shared helpers for the native tests: reading files, the committed data under tests/data, and
// a small JSON-object-of-strings reader.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention/io/safetensors.hpp"
#include "attention/model/model.hpp"

#ifndef ATTN_TEST_DATA_DIR
#error "ATTN_TEST_DATA_DIR must be defined (CMake sets it to tests/data for attention_tests)"
#endif

// The whole file as bytes; throws std::runtime_error naming the path if it cannot be read.
inline std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open test file " + path);
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("cannot read test file " + path);
  return bytes;
}

// Parses a .safetensors file given relative to tests/data, e.g. "numpy/randn_streams.safetensors".
inline attn::safetensors::File load_test_data(const std::string& relative_path) {
  const std::vector<std::uint8_t> bytes =
      read_file(std::string(ATTN_TEST_DATA_DIR) + "/" + relative_path);
  return attn::safetensors::File::parse(bytes);
}

// The cases of a tests/data folder, e.g. "golden": the names of its <case>.safetensors files,
// sorted; files ending in `leave_out` (e.g. ".weights.safetensors") are not cases.
inline std::vector<std::string> data_cases(const std::string& folder,
                                           const std::string& leave_out = "") {
  const std::string suffix = ".safetensors";
  std::vector<std::string> names;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(ATTN_TEST_DATA_DIR) + "/" + folder)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > suffix.size() && name.ends_with(suffix) &&
        (leave_out.empty() || !name.ends_with(leave_out))) {
      names.push_back(name.substr(0, name.size() - suffix.size()));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A flat JSON object of strings ({"key": "value", ...}, as tests/data/malformed/expected.json)
// as a map. A reader of its own, independent of the core's JSON parser that the corpus tests:
// escapes \" \\ \/ \b \f \n \r \t and \uXXXX (BMP, written as UTF-8); anything else throws.
inline std::map<std::string, std::string> parse_json_string_map(const std::string& text) {
  std::size_t at = 0;
  auto fail = [&](const std::string& what) -> void {
    throw std::runtime_error("test JSON: " + what + " at offset " + std::to_string(at));
  };
  auto skip_space = [&] {
    while (at < text.size() &&
           (text[at] == ' ' || text[at] == '\n' || text[at] == '\r' || text[at] == '\t')) {
      ++at;
    }
  };
  auto expect = [&](char c) {
    skip_space();
    if (at >= text.size() || text[at] != c) fail(std::string("expected '") + c + "'");
    ++at;
  };
  auto string = [&] {
    expect('"');
    std::string out;
    while (true) {
      if (at >= text.size()) fail("unterminated string");
      const char c = text[at++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at >= text.size()) fail("unterminated escape");
      const char e = text[at++];
      const std::string simple = "\"\\/bfnrt", meaning = "\"\\/\b\f\n\r\t";
      if (const auto k = simple.find(e); k != std::string::npos) {
        out += meaning[k];
      } else if (e == 'u' && at + 4 <= text.size()) {
        const unsigned cp = static_cast<unsigned>(std::stoul(text.substr(at, 4), nullptr, 16));
        at += 4;
        if (cp >= 0xD800 && cp < 0xE000) fail("surrogate escapes are not supported");
        if (cp < 0x80) {
          out += static_cast<char>(cp);
        } else if (cp < 0x800) {
          out += static_cast<char>(0xC0 | (cp >> 6));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
          out += static_cast<char>(0xE0 | (cp >> 12));
          out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        }
      } else {
        fail(std::string("unsupported escape \\") + e);
      }
    }
  };
  std::map<std::string, std::string> map;
  expect('{');
  skip_space();
  if (at < text.size() && text[at] == '}') {
    ++at;
  } else {
    while (true) {
      std::string key = string();
      expect(':');
      std::string value = string();
      if (!map.emplace(std::move(key), std::move(value)).second) fail("duplicate key");
      skip_space();
      if (at < text.size() && text[at] == ',') {
        ++at;
        continue;
      }
      expect('}');
      break;
    }
  }
  skip_space();
  if (at != text.size()) fail("trailing characters");
  return map;
}

inline std::map<std::string, std::string> read_json_string_map(const std::string& path) {
  const std::vector<std::uint8_t> bytes = read_file(path);
  return parse_json_string_map(std::string(bytes.begin(), bytes.end()));
}

// The float32-vs-float64 rule of the PyTorch golden tests (test_model_golden,
// test_gpt2_checkpoint): the L2 distances of ours and of PyTorch's float32 run from the float64
// run, and the float64 norm.
struct Float64Distances {
  double ours = 0.0;
  double torch32 = 0.0;
  double scale = 0.0;
};

template <class Ours>
Float64Distances float64_distances(const Ours& ours, const std::vector<double>& torch32,
                                   const std::vector<double>& f64) {
  Float64Distances d;
  for (std::size_t i = 0; i < f64.size(); ++i) {
    d.ours += (double(ours[i]) - f64[i]) * (double(ours[i]) - f64[i]);
    d.torch32 += (torch32[i] - f64[i]) * (torch32[i] - f64[i]);
    d.scale += f64[i] * f64[i];
  }
  d.ours = std::sqrt(d.ours);
  d.torch32 = std::sqrt(d.torch32);
  d.scale = std::sqrt(d.scale);
  return d;
}

// The PyTorch golden rule: our float32 error (the L2 norm of the difference from the float64
// run) may be at most kTorchErrorRatio times PyTorch's float32 error. Two float32
// implementations that sum in different orders (SIMD lanes, FMA, blocked k) have rounding errors
// of the same order but not the same size; 4× leaves room for that spread, while any real mistake
// (a wrong term, a missed bias, a wrong schedule) is off by orders of magnitude more than float32
// rounding. kTorchErrorFloor (relative to the float64 norm, ~8 float32 ulps) covers tensors
// PyTorch gets exactly right.
constexpr double kTorchErrorRatio = 4.0;
constexpr double kTorchErrorFloor = 1e-6;

// Checks the rule (a test may state a larger ratio, with its reason); returns our error over
// PyTorch's (0 where PyTorch's is within the floor), for a test that reports the largest.
template <class Ours>
double require_as_accurate_as_torch(const Ours& ours, const std::vector<double>& torch32,
                                    const std::vector<double>& f64, const std::string& what,
                                    double ratio = kTorchErrorRatio) {
  INFO(what);
  REQUIRE(ours.size() == f64.size());
  REQUIRE(torch32.size() == f64.size());
  const auto [e_ours, e_torch, scale] = float64_distances(ours, torch32, f64);
  const double bound = std::max(ratio * e_torch, kTorchErrorFloor * scale);
  INFO("our error " << e_ours << ", PyTorch float32's " << e_torch << ", float64 norm " << scale
                    << ", bound " << bound);
  CHECK(e_ours <= bound);
  return e_torch > kTorchErrorFloor * scale ? e_ours / e_torch : 0.0;
}

// A loaded checkpoint's forward on a golden file's ids against PyTorch's logits and every
// layer's attention (the golden rule above).
inline void require_golden_forward(attn::Model& model, const attn::safetensors::File& expected) {
  std::vector<std::int32_t> ids;
  for (const double id : expected.f64("ids")) ids.push_back(std::int32_t(id));
  const auto out = model.forward(ids, 1, ids.size());
  require_as_accurate_as_torch(out.logits, expected.f64("logits32"), expected.f64("logits64"),
                               "logits");
  for (std::size_t l = 0; l < model.config().layers; ++l) {
    const std::string layer = std::to_string(l);
    require_as_accurate_as_torch(out.attention[l], expected.f64("attn32." + layer),
                                 expected.f64("attn64." + layer), "attention of layer " + layer);
  }
}

// A .safetensors file's tensors, each given to `edit` (which may rename, reshape or change its
// bytes; false drops it), written back as one file.
template <class Edit>
std::vector<std::uint8_t> edited_safetensors(std::span<const std::uint8_t> bytes, Edit edit) {
  const auto file = attn::safetensors::File::parse(bytes);
  std::vector<attn::safetensors::TensorToWrite> tensors;
  for (const auto& info : file.tensors()) {
    attn::safetensors::TensorToWrite tensor{info.name, info.dtype, info.shape, {}};
    const auto raw = file.raw(info);
    tensor.bytes.assign(raw.begin(), raw.end());
    if (edit(tensor)) tensors.push_back(std::move(tensor));
  }
  return attn::safetensors::write(tensors);
}
