// Tests for the dequantization of ggml's formats (ops/dequantize): every format of
// tests/data/gguf/quants.gguf against the independent numpy reference of
// scripts/data/make-gguf-golden.py, bit for bit, and the refusals.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/io/gguf.hpp"
#include "attention/ops/dequantize.hpp"
#include "attention/ops/ggml_blocks.hpp"
#include "test_support.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

std::vector<std::uint8_t> quants_file() {
  return read_file(std::string(ATTN_TEST_DATA_DIR) + "/gguf/quants.gguf");
}

std::uint32_t bits_of(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

// The same float, bit for bit (any NaN matches any NaN: payloads are not part of the format).
bool same_float(float got, float want) {
  if (std::isnan(want)) return std::isnan(got);
  return bits_of(got) == bits_of(want);
}

}  // namespace

// Each format's values are the exact d·q (− dmin·min) rounded once to float (dequantize.hpp); the
// reference computes them exactly in float64 (checked against integers) and stores that value
// rounded once to float32, so the two must be the same float — no tolerance.
TEST_CASE("every format dequantizes to the numpy reference bit for bit", "[gguf][dequantize]") {
  const auto bytes = quants_file();
  const attn::gguf::Index index = attn::gguf::parse(bytes);
  const auto expected = load_test_data("gguf/quants.expected.safetensors");
  const std::vector<std::pair<std::string, attn::GgmlType>> formats = {
      {"f32", attn::GgmlType::F32},   {"f16", attn::GgmlType::F16},
      {"bf16", attn::GgmlType::BF16}, {"q8_0", attn::GgmlType::Q8_0},
      {"q4_0", attn::GgmlType::Q4_0}, {"q4_k", attn::GgmlType::Q4_K},
      {"q5_k", attn::GgmlType::Q5_K}, {"q6_k", attn::GgmlType::Q6_K},
      {"q4_1", attn::GgmlType::Q4_1}, {"q5_0", attn::GgmlType::Q5_0},
      {"q5_1", attn::GgmlType::Q5_1}};
  REQUIRE(index.tensors.size() == formats.size());
  for (const auto& [name, type] : formats) {
    INFO("tensor " << name);
    const attn::gguf::TensorInfo* tensor = index.find(name);
    REQUIRE(tensor != nullptr);
    CHECK(tensor->type == type);
    CHECK(tensor->shape() == expected.info(name).shape);
    const std::vector<float> got = attn::gguf::tensor_values(*tensor, bytes);
    const std::vector<float> want = expected.f32(name);
    REQUIRE(got.size() == want.size());
    std::size_t mismatches = 0, first = 0, nans = 0, infinities = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (!same_float(got[i], want[i]) && mismatches++ == 0) first = i;
      nans += std::isnan(want[i]);
      infinities += std::isinf(want[i]);
    }
    INFO("first mismatch at " << first << ": " << got[first] << " vs " << want[first]);
    CHECK(mismatches == 0);
    // The special values reach the output: each format's data holds NaN and infinities (a NaN or
    // infinite value, or scale d).
    CHECK(nans > 0);
    CHECK(infinities > 0);
  }
}

TEST_CASE("the K-quants' six-bit scales and mins unpack as ggml packs them", "[dequantize]") {
  // Sub-blocks 0–3: low 6 bits of bytes 0–3 (scales) and 4–7 (mins); 4–7: low nibble / high nibble
  // of bytes 8–11 and the top 2 bits of bytes 0–3 / 4–7.
  const std::uint8_t packed[12] = {0xC1, 0x42, 0x83, 0x04, 0x05, 0x46,
                                   0xC7, 0x08, 0x9A, 0xBC, 0xDE, 0xF0};
  const attn::ScaleMin expected[8] = {{1, 5},  {2, 6},   {3, 7},   {4, 8},
                                      {58, 9}, {28, 27}, {46, 61}, {0, 15}};
  for (std::size_t j = 0; j < 8; ++j) {
    INFO("sub-block " << j);
    CHECK(attn::k_scale_min(packed, j).scale == expected[j].scale);
    CHECK(attn::k_scale_min(packed, j).min == expected[j].min);
  }
}

TEST_CASE("one Q4_K block by hand: d · scale · q − dmin · min", "[dequantize]") {
  attn::BlockQ4_K block{};
  block.d[0] = 0x00;  // 2.0 (0x4000)
  block.d[1] = 0x40;
  block.dmin[0] = 0x00;  // 0.5 (0x3800)
  block.dmin[1] = 0x38;
  block.scales[0] = 3;   // sub-block 0: scale 3
  block.scales[4] = 10;  // sub-block 0: min 10
  block.scales[1] = 1;   // sub-block 1: scale 1, min 0
  block.qs[0] = 0x7F;    // value 0: q 15; value 32 (sub-block 1): q 7
  std::vector<float> out(256);
  attn::dequantize_q4_k(reinterpret_cast<const std::uint8_t*>(&block), 1, out.data());
  CHECK(out[0] == 2.0f * 3 * 15 - 0.5f * 10);
  CHECK(out[1] == -5.0f);  // q 0
  CHECK(out[32] == 2.0f * 1 * 7);
  CHECK(out[64] == 0.0f);  // sub-block 2: scale 0, min 0
}

TEST_CASE("dequantize refuses other types and sizes that do not match, naming them",
          "[dequantize]") {
  std::vector<std::uint8_t> bytes(34);
  std::vector<float> out(32);
  CHECK_THROWS_WITH(attn::dequantize(attn::GgmlType::IQ4_NL, bytes, out),
                    ContainsSubstring("IQ4_NL values cannot be read") &&
                        ContainsSubstring("Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K"));
  std::vector<float> partial(31);
  CHECK_THROWS_WITH(attn::dequantize(attn::GgmlType::Q8_0, bytes, partial),
                    ContainsSubstring("31 Q8_0 values is not a whole number of blocks of 32"));
  std::vector<std::uint8_t> short_bytes(33);
  CHECK_THROWS_WITH(attn::dequantize(attn::GgmlType::Q8_0, short_bytes, out),
                    ContainsSubstring("take 34 bytes, given 33 bytes"));
  attn::dequantize(attn::GgmlType::Q8_0, bytes, out);  // and the right sizes work after
  CHECK(out[0] == 0.0f);
}

TEST_CASE("the type table has ggml's block sizes", "[dequantize]") {
  const std::vector<std::tuple<std::uint32_t, const char*, std::uint32_t, std::uint32_t>> rows = {
      {0, "F32", 1, 4},       {1, "F16", 1, 2},       {2, "Q4_0", 32, 18},    {8, "Q8_0", 32, 34},
      {12, "Q4_K", 256, 144}, {13, "Q5_K", 256, 176}, {14, "Q6_K", 256, 210}, {30, "BF16", 1, 2}};
  for (const auto& [id, name, values, bytes] : rows) {
    const attn::GgmlTypeInfo* info = attn::find_ggml_type(id);
    REQUIRE(info != nullptr);
    CHECK(std::string(info->name) == name);
    CHECK(info->block_values == values);
    CHECK(info->block_bytes == bytes);
  }
  for (const std::uint32_t retired : {4u, 5u, 31u, 36u, 40u, 1000u}) {
    CHECK(attn::find_ggml_type(retired) == nullptr);
  }
}
