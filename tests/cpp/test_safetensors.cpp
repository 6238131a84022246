// Tests for the .safetensors reader/writer: round trips, exact bytes, golden files, bad input.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/io/safetensors.hpp"
#include "attention/ops/half.hpp"
#include "test_support.hpp"

namespace st = attn::safetensors;
using Catch::Matchers::ContainsSubstring;

namespace {

using Bytes = std::vector<std::uint8_t>;

void append_length(Bytes& out, std::uint64_t length) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(length >> (8 * i)));
}

// A file with the given header text (used verbatim, no padding) followed by `data`.
Bytes file_with_header(const std::string& header, const Bytes& data = Bytes(64, 0)) {
  Bytes out;
  append_length(out, header.size());
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// A header with one tensor "x" whose fields are given as raw JSON.
std::string one_tensor(const std::string& dtype, const std::string& shape,
                       const std::string& offsets) {
  return R"({"x":{"dtype":)" + dtype + R"(,"shape":)" + shape + R"(,"data_offsets":)" + offsets +
         "}}";
}

st::File parse_header(const std::string& header, const st::Limits& limits = {}) {
  return st::File::parse(file_with_header(header), limits);
}

// A tensor "x" of the given dtype with a bad shape or data_offsets (raw JSON), and a part of the
// error its header must be refused with.
struct BadTensor {
  std::string shape, offsets, error;
};

void check_refused(const std::string& dtype, const std::vector<BadTensor>& tensors) {
  for (const BadTensor& t : tensors) {
    INFO("shape " << t.shape << ", data_offsets " << t.offsets);
    CHECK_THROWS_WITH(parse_header(one_tensor(dtype, t.shape, t.offsets)),
                      ContainsSubstring(t.error));
  }
}

template <typename T>
Bytes bytes_of(const std::vector<T>& values) {
  Bytes out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

st::TensorToWrite make_f64(std::string name, std::vector<std::size_t> shape,
                           const std::vector<double>& values) {
  return st::TensorToWrite{std::move(name), st::DType::F64, std::move(shape), bytes_of(values)};
}

Bytes sample_file() {
  const std::vector<float> weights = {1.0f, -2.5f, 3.25f, 0.0f, 1e-3f, 7.0f};
  const std::vector<std::uint8_t> mask = {0, 1, 1, 0};
  return st::write({st::make_f32("in_proj_weight", {2, 3}, weights), make_f64("scale", {}, {0.125}),
                    st::make_u8("mask", {4}, mask)},
                   {{"heads", "2"}, {"note", "sample \"file\""}});
}

std::vector<std::filesystem::path> safetensors_files_in(const std::string& relative_dir) {
  std::vector<std::filesystem::path> paths;
  const std::filesystem::path dir = std::filesystem::path(ATTN_TEST_DATA_DIR) / relative_dir;
  if (!std::filesystem::is_directory(dir)) return paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".safetensors") paths.push_back(entry.path());
  }
  return paths;
}

// Reads every tensor with the reader of its dtype; returns the number of values read.
std::size_t read_all(const st::File& file) {
  std::size_t values = 0;
  for (const st::TensorInfo& tensor : file.tensors()) {
    switch (tensor.dtype) {
      case st::DType::F32:
        values += file.f32(tensor.name).size();
        break;
      case st::DType::F64:
        values += file.f64(tensor.name).size();
        break;
      case st::DType::U8:
        values += file.u8(tensor.name).size();
        break;
      case st::DType::Bool:
        values += file.bools(tensor.name).size();
        break;
      case st::DType::F16:
      case st::DType::BF16:
        values += file.as_f32(tensor.name).size();
        break;
    }
  }
  return values;
}

}  // namespace

// ---- round trips and the exact format --------------------------------------------------------

TEST_CASE("write then parse round-trips F32, F64 and U8 tensors with metadata", "[safetensors]") {
  const std::vector<float> f32 = {1.0f, -2.5f, 3.25f, 0.0f, 1e-30f, -7.0f};
  const std::vector<double> f64 = {0.1, -1e300, 2.0};
  const std::vector<std::uint8_t> u8 = {0, 1, 255, 7};
  const std::vector<float> scalar = {42.0f};
  const std::map<std::string, std::string> metadata = {
      {"quote\"back\\slash", "line\nbreak\ttab\x01 end"},
      {"unicode", "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"},
      {"empty", ""}};

  const Bytes bytes = st::write(
      {st::make_f32("weights", {2, 3}, f32), make_f64("f64", {3}, f64),
       st::make_u8("mask", {2, 2}, u8), st::make_f32("scalar", {}, scalar),
       st::make_f32("empty", {0, 5}, {}), st::make_f32("name with \"quotes\"\n", {1}, scalar)},
      metadata);
  REQUIRE(bytes.size() >= 8);
  std::uint64_t header_length = 0;
  for (int i = 0; i < 8; ++i) header_length |= std::uint64_t{bytes[i]} << (8 * i);
  CHECK(header_length % 8 == 0);

  const st::File file = st::File::parse(bytes);
  REQUIRE(file.tensors().size() == 6);
  CHECK(file.tensors()[0].name == "weights");
  CHECK(file.tensors()[1].name == "f64");
  CHECK(file.tensors()[5].name == "name with \"quotes\"\n");
  CHECK(file.metadata() == metadata);

  CHECK(file.info("weights").shape == std::vector<std::size_t>{2, 3});
  CHECK(file.info("weights").dtype == st::DType::F32);
  CHECK(file.f32("weights") == f32);
  CHECK(file.f64("f64") == f64);
  CHECK(file.u8("mask") == u8);

  const st::TensorInfo& scalar_info = file.info("scalar");
  CHECK(scalar_info.shape.empty());
  CHECK(scalar_info.element_count() == 1);
  CHECK(file.f32("scalar") == scalar);

  const st::TensorInfo& empty_info = file.info("empty");
  CHECK(empty_info.element_count() == 0);
  CHECK(empty_info.begin == empty_info.end);
  CHECK(file.f32("empty").empty());

  CHECK(file.contains("mask"));
  CHECK_FALSE(file.contains("missing"));
}

TEST_CASE("write produces exactly the documented bytes", "[safetensors]") {
  // Written by hand from the format: u64 LE header length, the JSON header padded with spaces
  // to a multiple of 8, then the data. The JSON is 130 bytes + 6 spaces = 136 = 0x88.
  const std::string json = R"({"__metadata__":{"k":"v"},)"
                           R"("a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                           R"("b":{"dtype":"F32","shape":[],"data_offsets":[2,6]}})"
                           "      ";
  Bytes expected = {0x88, 0, 0, 0, 0, 0, 0, 0};
  for (const char c : json) expected.push_back(static_cast<std::uint8_t>(c));
  for (const std::uint8_t byte : {0x01, 0x02, 0x00, 0x00, 0x80, 0x3F}) {  // U8 1, 2; F32 1.0f LE
    expected.push_back(byte);
  }

  const std::vector<std::uint8_t> a = {1, 2};
  const std::vector<float> b = {1.0f};
  const Bytes written =
      st::write({st::make_u8("a", {2}, a), st::make_f32("b", {}, b)}, {{"k", "v"}});
  CHECK(written == expected);
}

TEST_CASE("parse reads a hand-written file with whitespace, escapes and trailing bytes",
          "[safetensors]") {
  // F32 [-2.5, 1.0] and F64 [0.5]; the header uses spaces, newlines and a \u escape, and the
  // data buffer has two trailing bytes no tensor covers.
  const std::string header =
      "{ \"v\\u00e9c\" : { \"shape\" : [ 2 ], \"dtype\" : \"F32\", \"data_offsets\" : [ 0, 8 ] },\n"
      "  \"d\": {\"dtype\": \"F64\", \"shape\": [1], \"data_offsets\": [8, 16], \"extra\": null},\n"
      "  \"__metadata__\": {\"emoji\": \"\\ud83d\\ude00\"} }   ";
  const Bytes data = {0x00, 0x00, 0x20, 0xC0, 0x00, 0x00, 0x80, 0x3F,  // -2.5f, 1.0f
                      0,    0,    0,    0,    0,    0,    0xE0, 0x3F,  // 0.5
                      0xAA, 0xBB};
  const st::File file = st::File::parse(file_with_header(header, data));
  REQUIRE(file.tensors().size() == 2);
  CHECK(file.tensors()[0].name ==
        "v\xC3\xA9"
        "c");
  CHECK(file.f32("v\xC3\xA9"
                 "c") == std::vector<float>{-2.5f, 1.0f});
  CHECK(file.f64("d") == std::vector<double>{0.5});
  CHECK(file.metadata().at("emoji") == "\xF0\x9F\x98\x80");
}

TEST_CASE("parse accepts an empty header object and empty files of tensors", "[safetensors]") {
  CHECK(st::File::parse(file_with_header("{}", {})).tensors().empty());
  CHECK(st::File::parse(st::write({})).tensors().empty());
}

// ---- golden files written by the Python scripts ------------------------------------------------

TEST_CASE("every golden .safetensors file written by PyTorch and NumPy parses", "[safetensors]") {
  for (const std::string dir : {"golden", "numpy"}) {
    const auto paths = safetensors_files_in(dir);
    INFO("tests/data/" << dir);
    REQUIRE_FALSE(paths.empty());
    for (const auto& path : paths) {
      INFO(path.string());
      const st::File file = st::File::parse(read_file(path.string()));
      CHECK_FALSE(file.tensors().empty());
      std::size_t expected_values = 0;
      for (const auto& tensor : file.tensors()) expected_values += tensor.element_count();
      CHECK(read_all(file) == expected_values);
    }
  }
}

TEST_CASE("the PyTorch state_dict golden file has the nn.MultiheadAttention layout",
          "[safetensors]") {
  const st::File file = load_test_data("golden/self_bias.weights.safetensors");
  CHECK(file.info("in_proj_weight").shape == std::vector<std::size_t>{72, 24});
  CHECK(file.info("in_proj_bias").shape == std::vector<std::size_t>{72});
  CHECK(file.info("out_proj.weight").shape == std::vector<std::size_t>{24, 24});
  CHECK(file.f32("out_proj.bias").size() == 24);
  CHECK(file.metadata().at("heads") == "3");
}

// ---- malformed files: one test per class ------------------------------------------------------

TEST_CASE("parse rejects a file shorter than the length field", "[safetensors]") {
  const Bytes tiny = {1, 2, 3, 4, 5};
  CHECK_THROWS_WITH(st::File::parse(tiny), ContainsSubstring("file is 5 bytes long, too short"));
  CHECK_THROWS_AS(st::File::parse(Bytes{}), attn::Error);
}

TEST_CASE("parse rejects a header length past the end of the file", "[safetensors]") {
  Bytes bytes;
  append_length(bytes, 100);
  bytes.resize(18, ' ');
  CHECK_THROWS_WITH(st::File::parse(bytes),
                    ContainsSubstring("header length says 100 bytes but the file has only 10 "
                                      "after the length field"));
  Bytes huge;
  append_length(huge, ~std::uint64_t{0});
  huge.push_back('{');
  CHECK_THROWS_WITH(st::File::parse(huge), ContainsSubstring("the file has only 1 after"));
}

TEST_CASE("parse rejects a header longer than the limit", "[safetensors]") {
  st::Limits limits;
  limits.max_header_bytes = 16;
  CHECK_THROWS_WITH(parse_header(R"({"__metadata__":{"a":"b"}})", limits),
                    ContainsSubstring("header length 26 bytes is more than the limit of 16 bytes"));
}

TEST_CASE("parse rejects a file larger than max_total_bytes", "[safetensors]") {
  st::Limits limits;
  limits.max_total_bytes = 50;
  CHECK_THROWS_WITH(parse_header("{}", limits),
                    ContainsSubstring("file is 74 bytes long, more than the limit of 50 bytes"));
}

TEST_CASE("parse rejects a header that is not valid UTF-8", "[safetensors]") {
  CHECK_THROWS_WITH(parse_header("{\"a\xC3\":1}"),
                    ContainsSubstring("header is not valid UTF-8 (at header byte 3)"));
  CHECK_THROWS_WITH(parse_header("{\"\xED\xA0\x80\":1}"), ContainsSubstring("not valid UTF-8"));
  CHECK_THROWS_WITH(parse_header("{\"\xC0\xAF\":1}"), ContainsSubstring("not valid UTF-8"));
}

TEST_CASE("parse rejects invalid JSON", "[safetensors]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "unexpected end of header"},
      {"{", "expected a string key"},
      {R"({"a")", "expected ':' but the header ended"},
      {R"({"a" 1})", "expected ':'"},
      {R"({"a":1,})", "expected a string key"},
      {R"({"a":[1,]})", "expected a value"},
      {R"({"a":"unterminated})", "unterminated string"},
      {"{\"a\":\"tab\there\"}", "control character in a string"},
      {R"({"a":"\x41"})", "invalid escape '\\x'"},
      {R"({"a":"\u12G4"})", "invalid hex digit"},
      {R"({"a":"\ud800"})", "high surrogate not followed by a \\u low surrogate"},
      {R"({"a":"\ud800\u0041"})", "high surrogate not followed by a low surrogate"},
      {R"({"a":"\udc00"})", "unpaired low surrogate"},
      {R"({"a":01})", "leading zero"},
      {R"({"a":1.})", "expected a digit after the decimal point"},
      {R"({"a":1e+})", "expected a digit in the exponent"},
      {R"({"a":-})", "expected a value"},
      {R"({"a":tru})", "invalid literal"},
      {R"({"a":1} x)", "unexpected content after the JSON value"},
      {R"({} {})", "unexpected content after the JSON value"},
      {std::string(100, '[') + std::string(100, ']'), "nesting deeper than 64 levels"},
  };
  for (const auto& [header, phrase] : cases) {
    INFO("header: " << header);
    CHECK_THROWS_WITH(parse_header(header), ContainsSubstring("invalid JSON header at byte") &&
                                                ContainsSubstring(phrase));
  }
}

TEST_CASE("parse rejects a header that is not an object", "[safetensors]") {
  CHECK_THROWS_WITH(parse_header("[]"),
                    ContainsSubstring("header must be a JSON object, found an array"));
  CHECK_THROWS_WITH(parse_header("\"x\""), ContainsSubstring("found a string"));
  CHECK_THROWS_WITH(parse_header("null"), ContainsSubstring("found null"));
}

TEST_CASE("parse rejects a tensor entry that is not an object", "[safetensors]") {
  CHECK_THROWS_WITH(parse_header(R"({"w":[1,2]})"),
                    ContainsSubstring("tensor 'w' must be an object with dtype, shape and "
                                      "data_offsets, found an array"));
}

TEST_CASE("parse rejects a tensor entry missing a field", "[safetensors]") {
  CHECK_THROWS_WITH(parse_header(R"({"w":{"shape":[1],"data_offsets":[0,4]}})"),
                    ContainsSubstring("tensor 'w' has no dtype"));
  CHECK_THROWS_WITH(parse_header(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})"),
                    ContainsSubstring("tensor 'w' has no shape"));
  CHECK_THROWS_WITH(parse_header(R"({"w":{"dtype":"F32","shape":[1]}})"),
                    ContainsSubstring("tensor 'w' has no data_offsets"));
}

TEST_CASE("parse rejects tensor fields of the wrong type", "[safetensors]") {
  CHECK_THROWS_WITH(parse_header(one_tensor("32", "[1]", "[0,4]")),
                    ContainsSubstring("tensor 'x' dtype must be a string, found a number"));
  CHECK_THROWS_WITH(parse_header(one_tensor(R"("F32")", R"("2x3")", "[0,4]")),
                    ContainsSubstring("tensor 'x' shape must be an array, found a string"));
  CHECK_THROWS_WITH(parse_header(one_tensor(R"("F32")", "[1]", R"({"begin":0})")),
                    ContainsSubstring("tensor 'x' data_offsets must be an array of two integers"));
  CHECK_THROWS_WITH(parse_header(one_tensor(R"("F32")", R"(["1"])", "[0,4]")),
                    ContainsSubstring("shape entry 0 must be a non-negative integer, found a "
                                      "string"));
}

TEST_CASE("parse rejects duplicate keys inside a tensor entry", "[safetensors]") {
  CHECK_THROWS_WITH(
      parse_header(R"({"x":{"dtype":"F32","dtype":"U8","shape":[1],"data_offsets":[0,4]}})"),
      ContainsSubstring("tensor 'x' has a duplicate 'dtype' key"));
}

TEST_CASE("parse rejects an unknown dtype and lists the supported ones", "[safetensors]") {
  CHECK_THROWS_WITH(parse_header(one_tensor(R"("F8_E4M3")", "[2]", "[0,4]")),
                    ContainsSubstring("tensor 'x' has unsupported dtype 'F8_E4M3' "
                                      "(supported: F32, F64, U8, BOOL, F16, BF16)"));
}

TEST_CASE("parse rejects negative, fractional and too large shape entries", "[safetensors]") {
  check_refused(
      R"("F32")",
      {
          {"[2,-1]", "[0,4]", "tensor 'x' shape entry 1 is negative (-1)"},
          {"[2.5]", "[0,4]", "tensor 'x' shape entry 0 must be an integer, found 2.5"},
          {"[1e2]", "[0,4]", "must be an integer, found 1e2"},
          {"[9007199254740993]", "[0,4]", "shape entry 0 is too large (9007199254740993)"},
          {"[123456789012345678901234567890]", "[0,4]", "is too large"},
      });
}

TEST_CASE("parse rejects shapes whose byte size overflows or exceeds the limit", "[safetensors]") {
  CHECK_THROWS_WITH(parse_header(one_tensor(R"("F64")", "[4294967296,4294967296]", "[0,8]")),
                    ContainsSubstring("tensor 'x' has shape [4294967296, 4294967296] whose size "
                                      "overflows"));
  CHECK_THROWS_WITH(parse_header(one_tensor(R"("F32")", "[1000000000,4]", "[0,8]")),
                    ContainsSubstring("tensor 'x' has shape [1000000000, 4] (4000000000 F32 "
                                      "values = 16000000000 bytes), more than the limit of "
                                      "1073741824 bytes"));
  // A zero dimension makes the product zero even when the other dimensions are huge.
  CHECK_NOTHROW(
      parse_header(one_tensor(R"("F64")", "[9007199254740992,9007199254740992,0]", "[0,0]")));
}

TEST_CASE("parse rejects a rank above max_rank", "[safetensors]") {
  CHECK_THROWS_WITH(parse_header(one_tensor(R"("U8")", "[1,1,1,1,1,1,1,1,1]", "[0,1]")),
                    ContainsSubstring("tensor 'x' has rank 9, more than the limit of 8"));
  st::Limits limits;
  limits.max_rank = 1;
  CHECK_THROWS_WITH(parse_header(one_tensor(R"("U8")", "[1,1]", "[0,1]"), limits),
                    ContainsSubstring("has rank 2, more than the limit of 1"));
}

TEST_CASE("parse rejects malformed data_offsets", "[safetensors]") {
  check_refused(R"("F32")",
                {
                    {"[1]", "[0]", "data_offsets must be an array of two integers"},
                    {"[1]", "[0,4,8]", "data_offsets must be an array of two integers"},
                    {"[1]", "[-4,0]", "tensor 'x' data_offsets begin is negative (-4)"},
                    {"[1]", "[0,4.0]", "data_offsets end must be an integer, found 4.0"},
                    {"[0]", "[8,4]", "tensor 'x' has data_offsets [8, 4] with begin > end"},
                    {"[1]", "[64,68]",
                     "tensor 'x' has data_offsets [64, 68] past the end of the data buffer "
                     "(64 bytes)"},
                });
}

TEST_CASE("parse rejects data_offsets that disagree with the shape", "[safetensors]") {
  const std::string header =
      R"({"in_proj_weight":{"dtype":"F32","shape":[24,8],"data_offsets":[0,764]}})";
  CHECK_THROWS_WITH(st::File::parse(file_with_header(header, Bytes(768, 0))),
                    ContainsSubstring("safetensors: tensor 'in_proj_weight' has shape [24, 8] "
                                      "(192 F32 values = 768 bytes) but data_offsets span "
                                      "764 bytes"));
  CHECK_THROWS_WITH(parse_header(one_tensor(R"("F64")", "[]", "[0,4]")),
                    ContainsSubstring("has shape [] (1 F64 value = 8 bytes) but data_offsets "
                                      "span 4 bytes"));
}

TEST_CASE("parse rejects overlapping tensors", "[safetensors]") {
  CHECK_THROWS_WITH(parse_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                 R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})"),
                    ContainsSubstring("tensors 'a' [0, 8] and 'b' [4, 12] overlap"));
  // Empty tensors overlap nothing, and gaps between tensors are allowed.
  CHECK_NOTHROW(parse_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},)"
                             R"("b":{"dtype":"U8","shape":[2],"data_offsets":[16,18]}})"));
}

TEST_CASE("parse rejects duplicate tensor names", "[safetensors]") {
  CHECK_THROWS_WITH(parse_header(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                                 R"("a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})"),
                    ContainsSubstring("duplicate tensor name 'a'"));
  CHECK_THROWS_WITH(parse_header(R"({"__metadata__":{},"__metadata__":{}})"),
                    ContainsSubstring("more than one __metadata__"));
}

TEST_CASE("parse rejects more tensors than max_tensors", "[safetensors]") {
  st::Limits limits;
  limits.max_tensors = 2;
  const std::string header = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                             R"("b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},)"
                             R"("c":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}})";
  CHECK_THROWS_WITH(parse_header(header, limits),
                    ContainsSubstring("header lists more than 2 tensors (the limit)"));
  limits.max_tensors = 3;
  CHECK(parse_header(header, limits).tensors().size() == 3);
}

TEST_CASE("parse rejects __metadata__ that is not an object of strings", "[safetensors]") {
  CHECK_THROWS_WITH(parse_header(R"({"__metadata__":["a"]})"),
                    ContainsSubstring("__metadata__ must be an object of strings, found an array"));
  CHECK_THROWS_WITH(parse_header(R"({"__metadata__":{"heads":4}})"),
                    ContainsSubstring("__metadata__ value for key 'heads' must be a string, "
                                      "found a number"));
  CHECK_THROWS_WITH(parse_header(R"({"__metadata__":{"k":"1","k":"2"}})"),
                    ContainsSubstring("__metadata__ has a duplicate key 'k'"));
}

TEST_CASE("error messages cut very long tensor names short", "[safetensors]") {
  const std::string name(5000, 'n');
  try {
    parse_header("{\"" + name + "\":1}");
    FAIL("expected attn::Error");
  } catch (const attn::Error& error) {
    CHECK(std::string(error.what()).size() < 300);
    CHECK_THAT(error.what(), ContainsSubstring("...' must be an object"));
  }
}

TEST_CASE("parse rejects a tensor name longer than max_name_bytes", "[safetensors]") {
  const std::string name(1025, 'w');
  const std::string entry = R"({"dtype":"U8","shape":[1],"data_offsets":[0,1]})";
  CHECK_THROWS_WITH(
      parse_header("{\"" + name + "\":" + entry + "}"),
      ContainsSubstring("has a name of 1025 bytes, more than the limit of 1024 bytes"));
  CHECK_NOTHROW(parse_header("{\"" + name.substr(1) + "\":" + entry + "}"));
  st::Limits limits;
  limits.max_name_bytes = 4;
  CHECK_THROWS_WITH(parse_header(R"({"abcde":)" + entry + "}", limits),
                    ContainsSubstring("tensor 'abcde' has a name of 5 bytes, more than the limit "
                                      "of 4 bytes"));
}

// ---- readers and writer checks ----------------------------------------------------------------

TEST_CASE("readers reject a missing tensor or another dtype", "[safetensors]") {
  const st::File file = st::File::parse(sample_file());
  CHECK_THROWS_WITH(file.f64("in_proj_weight"),
                    ContainsSubstring("tensor 'in_proj_weight' is F32, expected F64"));
  CHECK_THROWS_WITH(file.f32("scale"), ContainsSubstring("tensor 'scale' is F64, expected F32"));
  CHECK_THROWS_WITH(file.u8("scale"), ContainsSubstring("is F64, expected U8"));
  CHECK_THROWS_WITH(file.f32("nope"),
                    ContainsSubstring("no tensor named 'nope' (the file has 'in_proj_weight', "
                                      "'scale', 'mask')"));
  CHECK_THROWS_WITH(file.info("nope"), ContainsSubstring("no tensor named 'nope'"));
}

TEST_CASE("write rejects byte counts that disagree with the shape", "[safetensors]") {
  st::TensorToWrite tensor{"w", st::DType::F32, {2, 2}, Bytes(15, 0)};
  CHECK_THROWS_WITH(st::write({tensor}),
                    ContainsSubstring("tensor 'w' has shape [2, 2] (4 F32 values = 16 bytes) but "
                                      "15 bytes were given"));
  const std::vector<float> three = {1, 2, 3};
  CHECK_THROWS_WITH(st::make_f32("w", {2, 2}, three),
                    ContainsSubstring("tensor 'w' has shape [2, 2] but 3 values were given"));
  const std::vector<std::uint8_t> one = {1};
  CHECK_THROWS_WITH(st::make_u8("m", {}, std::vector<std::uint8_t>{}),
                    ContainsSubstring("has shape [] but 0 values were given"));
  CHECK_NOTHROW(st::make_u8("m", {}, one));
}

TEST_CASE("write rejects names the reader would reject", "[safetensors]") {
  const std::vector<std::uint8_t> one = {1};
  CHECK_THROWS_WITH(st::write({st::make_u8("a", {1}, one), st::make_u8("a", {1}, one)}),
                    ContainsSubstring("duplicate tensor name 'a'"));
  CHECK_THROWS_WITH(st::write({st::make_u8("__metadata__", {1}, one)}),
                    ContainsSubstring("cannot be named __metadata__"));
  CHECK_THROWS_WITH(st::write({st::make_u8("bad\xFF", {1}, one)}),
                    ContainsSubstring("a tensor name is not valid UTF-8"));
  CHECK_THROWS_WITH(st::write({}, {{"k", "\xC3"}}),
                    ContainsSubstring("metadata value for key 'k' is not valid UTF-8"));
}

// ---- mini-fuzz ---------------------------------------------------------------------------------

TEST_CASE("mutated files either parse or throw attn::Error", "[safetensors]") {
  const Bytes original = sample_file();
  const std::string json_chars = "{}[]\":,-.0123456789eE\\u \x80\xFF";
  std::mt19937 rng(20240601);
  const auto below = [&rng](std::size_t n) { return n == 0 ? 0 : rng() % n; };

  std::size_t accepted = 0, rejected = 0;
  for (int iteration = 0; iteration < 4000; ++iteration) {
    Bytes bytes = original;
    const std::size_t mutations = 1 + below(4);
    for (std::size_t m = 0; m < mutations && !bytes.empty(); ++m) {
      switch (below(6)) {
        case 0:  // flip bits of a byte
          bytes[below(bytes.size())] ^= static_cast<std::uint8_t>(1 + below(255));
          break;
        case 1:  // drop the tail
          bytes.resize(below(bytes.size() + 1));
          break;
        case 2:  // nudge the header length
          if (bytes.size() >= 8) bytes[0] = static_cast<std::uint8_t>(bytes[0] + below(17) - 8);
          break;
        case 3:  // scribble a random header length byte
          if (bytes.size() >= 8) bytes[below(8)] = static_cast<std::uint8_t>(rng());
          break;
        case 4:  // put a JSON-significant character somewhere
          bytes[below(bytes.size())] =
              static_cast<std::uint8_t>(json_chars[below(json_chars.size())]);
          break;
        default:  // insert or erase a byte
          if (rng() % 2 == 0) {
            bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(below(bytes.size() + 1)),
                         static_cast<std::uint8_t>(rng()));
          } else {
            bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(below(bytes.size())));
          }
      }
    }
    try {
      const st::File file = st::File::parse(bytes);
      read_all(file);
      ++accepted;
    } catch (const attn::Error&) {
      ++rejected;
    }
  }
  CHECK(accepted > 0);
  CHECK(rejected > 0);
}

TEST_CASE("F16 and BF16 tensors convert exactly to float", "[safetensors]") {
  CHECK(attn::f16_to_f32(0x3C00) == 1.0f);
  CHECK(attn::f16_to_f32(0xC000) == -2.0f);
  CHECK(attn::f16_to_f32(0x7BFF) == 65504.0f);
  CHECK(attn::f16_to_f32(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(attn::f16_to_f32(0x03FF) == std::ldexp(1023.0f, -24));
  CHECK(std::isinf(attn::f16_to_f32(0x7C00)));
  CHECK(std::isnan(attn::f16_to_f32(0x7E00)));
  CHECK(std::signbit(attn::f16_to_f32(0x8000)));
  CHECK(attn::bf16_to_f32(0x3F80) == 1.0f);
  CHECK(attn::bf16_to_f32(0xC0A0) == -5.0f);
  const Bytes half = {0x00, 0x3C, 0x00, 0xC0};  // 1, -2
  std::vector<float> out(2);
  st::convert_to_f32(st::DType::F16, half, out);
  CHECK(out == std::vector<float>{1.0f, -2.0f});
  CHECK_THROWS_WITH(st::convert_to_f32(st::DType::F16, half, std::span<float>(out.data(), 1)),
                    ContainsSubstring("4 bytes of F16 cannot fill 1 value"));
  st::TensorToWrite tensor{"w", st::DType::BF16, {2}, Bytes{0x80, 0x3F, 0xA0, 0xC0}};
  const auto file = st::File::parse(st::write({tensor}));
  CHECK(file.info("w").dtype == st::DType::BF16);
  CHECK(file.as_f32("w") == std::vector<float>{1.0f, -5.0f});
  CHECK_THROWS_WITH(file.f32("w"), ContainsSubstring("is BF16, expected F32"));
}
