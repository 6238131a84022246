// Shared helpers for the native tests: reading files and the committed data under tests/data.
#pragma once

#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention/safetensors.hpp"

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

// A JSON object of strings (such as tests/data/malformed/expected.json) as a map, read with the
// core's own strict JSON parser: the object becomes the __metadata__ of a header-only
// .safetensors file.
inline std::map<std::string, std::string> read_json_string_map(const std::string& path) {
  const std::vector<std::uint8_t> json = read_file(path);
  const std::string header = R"({"__metadata__":)" + std::string(json.begin(), json.end()) + "}";
  std::vector<std::uint8_t> bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<std::uint8_t>(header.size() >> (8 * i)));
  bytes.insert(bytes.end(), header.begin(), header.end());
  return attn::safetensors::File::parse(bytes).metadata();
}
