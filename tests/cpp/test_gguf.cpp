// Tests for the GGUF reader (io/gguf): every metadata type of tests/data/gguf/metadata.gguf, the
// tensor infos and alignment, prefixes that say how many bytes they need, and hostile headers
// refused by name (built here byte by byte), the reader working after each.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/io/gguf.hpp"
#include "test_support.hpp"

namespace gguf = attn::gguf;
using Catch::Matchers::ContainsSubstring;

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes metadata_file() {
  return read_file(std::string(ATTN_TEST_DATA_DIR) + "/gguf/metadata.gguf");
}

// ---- a small GGUF writer for hostile headers -------------------------------------------------

void put_u32(Bytes& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}
void put_u64(Bytes& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}
void put_string(Bytes& out, const std::string& text) {
  put_u64(out, text.size());
  out.insert(out.end(), text.begin(), text.end());
}
Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

constexpr std::uint32_t kU8 = 0, kU32 = 4, kI32 = 5, kString = 8, kArray = 9, kU64 = 10;
constexpr std::uint32_t kF32 = 0, kQ8_0 = 8;  // ggml types

// A key-value: key, value type, value bytes.
Bytes kv(const std::string& key, std::uint32_t type, const Bytes& value) {
  Bytes out;
  put_string(out, key);
  put_u32(out, type);
  return cat({out, value});
}
Bytes u32_value(std::uint32_t value) {
  Bytes out;
  put_u32(out, value);
  return out;
}
Bytes string_value(const std::string& text) {
  Bytes out;
  put_string(out, text);
  return out;
}
// An array header (element type, length) followed by `elements`.
Bytes array_value(std::uint32_t element, std::uint64_t count, const Bytes& elements = {}) {
  Bytes out;
  put_u32(out, element);
  put_u64(out, count);
  return cat({out, elements});
}
// A tensor info: name, rank, dims (ne[0] first), ggml type, offset.
Bytes info(const std::string& name, const std::vector<std::uint64_t>& dims, std::uint32_t type,
           std::uint64_t offset) {
  Bytes out;
  put_string(out, name);
  put_u32(out, static_cast<std::uint32_t>(dims.size()));
  for (const std::uint64_t dim : dims) put_u64(out, dim);
  put_u32(out, type);
  put_u64(out, offset);
  return out;
}

struct FileSpec {
  std::vector<Bytes> kvs;
  std::vector<Bytes> infos;
  std::size_t data_bytes = 0;
  std::uint32_t version = 3;
  std::uint64_t tensor_count = std::numeric_limits<std::uint64_t>::max();  // max: infos.size()
  std::uint64_t kv_count = std::numeric_limits<std::uint64_t>::max();      // max: kvs.size()
  std::size_t alignment = 32;
};

Bytes file(const FileSpec& spec) {
  Bytes out = {'G', 'G', 'U', 'F'};
  put_u32(out, spec.version);
  put_u64(out, spec.tensor_count == std::numeric_limits<std::uint64_t>::max() ? spec.infos.size()
                                                                              : spec.tensor_count);
  put_u64(out, spec.kv_count == std::numeric_limits<std::uint64_t>::max() ? spec.kvs.size()
                                                                          : spec.kv_count);
  for (const Bytes& part : spec.kvs) out.insert(out.end(), part.begin(), part.end());
  for (const Bytes& part : spec.infos) out.insert(out.end(), part.begin(), part.end());
  while (out.size() % spec.alignment != 0) out.push_back(0);
  out.resize(out.size() + spec.data_bytes, 0);
  return out;
}

// A good file of one F32 [4, 2] tensor (32 bytes) and one key: the base the hostile ones vary.
FileSpec good_spec() {
  return {{kv("general.architecture", kString, string_value("test"))},
          {info("w", {4, 2}, kF32, 0)},
          32};
}

// The reader still works: a good file parses and gives its tensor.
void check_still_works() {
  const gguf::Index index = gguf::parse(file(good_spec()));
  REQUIRE(index.tensors.size() == 1);
  CHECK(index.tensors[0].bytes == 32);
}

void check_refused(const Bytes& bytes, const std::string& message) {
  INFO("expected: " << message);
  CHECK_THROWS_WITH(gguf::parse(bytes), ContainsSubstring(message));
  check_still_works();
}

}  // namespace

TEST_CASE("every metadata value type round-trips", "[gguf]") {
  const gguf::Index index = gguf::parse(metadata_file());
  const gguf::Metadata& m = index.metadata;
  CHECK(index.version == 3);
  CHECK(m.entries().size() == 36);
  CHECK(m.entries()[0].key == "general.architecture");  // file order
  CHECK(m.string("general.architecture") == "test");
  CHECK(m.integer("test.u8") == 255);
  CHECK(m.integer("test.i8") == -128);
  CHECK(m.integer("test.u16") == 65535);
  CHECK(m.integer("test.i16") == -32768);
  CHECK(m.integer("test.u32") == 4294967295);
  CHECK(m.integer("test.i32") == -2147483648LL);
  CHECK(m.number("test.f32") == 1.5);
  CHECK(m.boolean("test.bool"));
  CHECK(m.string("test.string") == "h\xc3\xa9llo \xe2\x9c\x93");
  CHECK(m.number("test.u64") == 18446744073709551615.0);
  CHECK_THROWS_WITH(m.integer("test.u64"), ContainsSubstring("18446744073709551615, too large"));
  CHECK(m.integer("test.i64") == std::numeric_limits<std::int64_t>::min());
  CHECK(m.number("test.f64") == 0.1);
  CHECK(m.string("test.empty_string").empty());
  CHECK(m.integers("test.array.u8") == std::vector<std::int64_t>{0, 1, 255});
  CHECK(m.integers("test.array.i8") == std::vector<std::int64_t>{-128, 0, 127});
  CHECK(m.integers("test.array.u16") == std::vector<std::int64_t>{0, 65535});
  CHECK(m.integers("test.array.i16") == std::vector<std::int64_t>{-32768, 32767});
  CHECK(m.integers("test.array.u32") == std::vector<std::int64_t>{0, 4294967295});
  CHECK(m.integers("test.array.i32") == std::vector<std::int64_t>{-2147483648LL, 2147483647});
  CHECK(m.floats("test.array.f32") == std::vector<float>{0.5f, -2.0f, 3.25f});
  CHECK(m.at("test.array.bool").bytes == Bytes{1, 0, 1});
  CHECK(m.strings("test.array.string") ==
        std::vector<std::string>{"", "a", "\xc4\xa0Hello", "\xc3\xa9\xe4\xb8\xad"});
  CHECK(m.integers("test.array.u64") == std::vector<std::int64_t>{0, 9223372036854775807});
  CHECK(m.integers("test.array.i64") ==
        std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min(), 1});
  CHECK(m.at("test.array.f64").count == 2);
  CHECK(m.floats("test.array.f64")[0] == 0.25f);
  CHECK(m.integers("test.array.empty").empty());
  CHECK(m.at("test.array.empty").type_text() == "array of 0 i32");

  const gguf::Value& nested = m.at("test.array.nested");
  CHECK(nested.type_text() == "array of 3 arrays");
  REQUIRE(nested.items.size() == 3);
  CHECK(nested.items[0].type_text() == "array of 2 i32");
  CHECK(nested.items[1].bytes == Bytes{3, 0, 0, 0});
  CHECK(nested.items[2].strings == std::vector<std::string>{"x", "yz"});
  const gguf::Value& deeper = m.at("test.array.nested2");
  REQUIRE(deeper.items.size() == 1);
  REQUIRE(deeper.items[0].items.size() == 1);
  CHECK(deeper.items[0].items[0].bytes == Bytes{7});

  CHECK(m.strings("tokenizer.ggml.tokens").size() == 5);
  CHECK(m.floats("tokenizer.ggml.scores") == std::vector<float>{0, 0, -1, -2, -3.5f});
  CHECK(m.integers("tokenizer.ggml.token_type") == std::vector<std::int64_t>{3, 3, 1, 1, 1});
}

TEST_CASE("metadata lookups name the key and both types", "[gguf]") {
  const gguf::Index index = gguf::parse(metadata_file());
  const gguf::Metadata& m = index.metadata;
  CHECK_THROWS_WITH(m.integer("llama.block_count"),
                    ContainsSubstring("no key 'llama.block_count'"));
  CHECK_THROWS_WITH(m.integer("test.string"),
                    ContainsSubstring("'test.string' is string, expected an integer"));
  CHECK_THROWS_WITH(m.string("test.u32"),
                    ContainsSubstring("'test.u32' is u32, expected a string"));
  CHECK_THROWS_WITH(m.strings("test.array.f32"),
                    ContainsSubstring("is array of 3 f32, expected an array of strings"));
  CHECK_THROWS_WITH(m.floats("tokenizer.ggml.tokens"),
                    ContainsSubstring("is array of 5 strings, expected an array of f32 or f64"));
  CHECK_THROWS_WITH(m.boolean("test.u8"), ContainsSubstring("'test.u8' is u8, expected a bool"));
  CHECK_THROWS_WITH(m.number("test.array.nested"),
                    ContainsSubstring("is array of 3 arrays, expected a number"));
}

TEST_CASE("tensor infos: types, dims, shapes, aligned offsets and values", "[gguf]") {
  const Bytes bytes = metadata_file();
  const gguf::Index index = gguf::parse(bytes);
  CHECK(index.alignment == 64);
  CHECK(index.data_offset % 64 == 0);
  CHECK(index.data_offset >= index.header_bytes);
  CHECK(index.data_offset - index.header_bytes < 64);
  REQUIRE(index.tensors.size() == 3);
  const gguf::TensorInfo& a = index.tensors[0];
  const gguf::TensorInfo& b = index.tensors[1];
  const gguf::TensorInfo& c = index.tensors[2];
  CHECK(a.name == "a");
  CHECK(a.type == attn::GgmlType::F32);
  CHECK(a.dims == std::vector<std::uint64_t>{3});
  CHECK(a.bytes == 12);
  CHECK(b.type == attn::GgmlType::F16);
  CHECK(b.dims == std::vector<std::uint64_t>{2, 4});
  CHECK(b.shape() == std::vector<std::size_t>{4, 2});
  CHECK(b.bytes == 16);
  CHECK(c.type == attn::GgmlType::Q8_0);
  CHECK(c.bytes == 34);
  CHECK(a.offset == 0);
  CHECK(b.offset == 64);
  CHECK(c.offset == 128);
  CHECK(c.begin == index.data_offset + 128);
  CHECK(c.end == c.begin + 34);
  CHECK(gguf::tensor_values(a, bytes) == std::vector<float>{1.0f, -2.0f, 0.5f});
  const std::vector<float> b_values = gguf::tensor_values(b, bytes);
  CHECK(b_values[0] == 1.0f);
  CHECK(b_values[3] == 65504.0f);
  const std::vector<float> c_values = gguf::tensor_values(c, bytes);
  CHECK(c_values.front() == -8.0f);  // 0.5 · -16
  CHECK(c_values.back() == 7.5f);    // 0.5 · 15

  const gguf::Index quants =
      gguf::parse(read_file(std::string(ATTN_TEST_DATA_DIR) + "/gguf/quants.gguf"));
  CHECK(quants.alignment == 32);  // the default: no general.alignment key
  CHECK(quants.data_offset % 32 == 0);
  for (const gguf::TensorInfo& tensor : quants.tensors) CHECK(tensor.offset % 32 == 0);
}

TEST_CASE("version 2 files read as version 3", "[gguf]") {
  Bytes bytes = metadata_file();
  bytes[4] = 2;
  const gguf::Index index = gguf::parse(bytes);
  CHECK(index.version == 2);
  CHECK(index.tensors.size() == 3);
  CHECK(index.metadata.integer("test.i8") == -128);
}

TEST_CASE("a prefix too short says how many bytes it needs, and more bytes finish it", "[gguf]") {
  const Bytes bytes = metadata_file();
  const gguf::Index whole = gguf::parse(bytes);
  const std::uint64_t size = bytes.size();
  // Every prefix shorter than the header asks for more: at least one byte more, at most the file,
  // and the exact header suffices.
  for (std::uint64_t cut = 0; cut < whole.header_bytes; ++cut) {
    const gguf::HeadResult result =
        gguf::parse_head(std::span<const std::uint8_t>(bytes.data(), cut), size);
    INFO("prefix of " << cut << " bytes");
    REQUIRE_FALSE(result.index.has_value());
    CHECK(result.bytes_needed > cut);
    CHECK(result.bytes_needed <= size);
  }
  const gguf::HeadResult exact =
      gguf::parse_head(std::span<const std::uint8_t>(bytes.data(), whole.header_bytes), size);
  REQUIRE(exact.index.has_value());
  CHECK(exact.index->tensors.size() == 3);
  CHECK(exact.index->data_offset == whole.data_offset);

  // Following bytes_needed from the first 8 bytes reaches the header in a few reads.
  std::uint64_t have = 8;
  int reads = 0;
  std::optional<gguf::Index> index;
  while (!index) {
    const gguf::HeadResult result =
        gguf::parse_head(std::span<const std::uint8_t>(bytes.data(), have), size);
    index = result.index;
    if (!index) have = result.bytes_needed;
    ++reads;
    REQUIRE(reads < 20);
  }
  CHECK(index->metadata.strings("test.array.string").size() == 4);
  CHECK(index->tensors[2].begin == whole.tensors[2].begin);

  // A string larger than the prefix: the exact end of the string is asked for (a 1 MB value in a
  // 10 MB file whose first 100 bytes, past the string's length, are given).
  FileSpec spec = good_spec();
  spec.kvs.push_back(kv("big", kString, string_value(std::string(1 << 20, 'x'))));
  const Bytes big = file(spec);
  const gguf::HeadResult result =
      gguf::parse_head(std::span<const std::uint8_t>(big.data(), 100), std::uint64_t{10} << 20);
  REQUIRE_FALSE(result.index.has_value());
  const std::uint64_t string_end = 24 + (8 + 20 + 4 + 8 + 4) + (8 + 3 + 4 + 8) + (1 << 20);
  CHECK(result.bytes_needed == string_end);
}

TEST_CASE("hostile headers are refused by name and the reader works after each", "[gguf]") {
  const std::uint64_t huge = std::uint64_t{1} << 63;
  SECTION("counts") {
    FileSpec tensors = good_spec();
    tensors.tensor_count = huge;
    check_refused(file(tensors),
                  "claims 9223372036854775808 tensors, more than the limit of 65536");
    FileSpec keys = good_spec();
    keys.kv_count = huge;
    check_refused(file(keys), "claims 9223372036854775808 metadata keys, more than the limit");
    FileSpec more_keys = good_spec();
    more_keys.kv_count = 60000;  // within the limit, but the file cannot hold them
    check_refused(file(more_keys), "60000 metadata keys at byte 24 cannot fit in the");
  }
  SECTION("strings") {
    FileSpec past = good_spec();
    past.kvs = {kv("general.name", kString, cat({Bytes{0xE8, 0x03, 0, 0, 0, 0, 0, 0}}))};
    check_refused(file(past), "metadata key 'general.name''s string (1000 bytes) at byte");
    check_refused(file(past), "runs past the end of the file");
    FileSpec huge_string = good_spec();
    Bytes length;
    put_u64(length, huge);
    huge_string.kvs = {kv("general.name", kString, length)};
    check_refused(file(huge_string), "is 9223372036854775808 bytes long, more than the limit");
    FileSpec key = good_spec();
    Bytes key_bytes;
    put_u64(key_bytes, 5000);
    key.kvs = {key_bytes};
    check_refused(file(key), "metadata key 0 at byte 24 is 5000 bytes long");
  }
  SECTION("arrays") {
    FileSpec billion = good_spec();
    billion.kvs.push_back(kv("tokenizer.ggml.tokens", kArray, array_value(kString, 1000000000)));
    check_refused(file(billion),
                  "'tokenizer.ggml.tokens''s array of 1000000000 strings is longer than the limit");
    FileSpec short_file = good_spec();
    short_file.kvs.push_back(kv("scores", kArray, array_value(kU32, 1000000)));
    check_refused(file(short_file), "array of 1000000 u32 at byte");
    FileSpec nested = good_spec();
    Bytes deep = array_value(kU8, 0);
    for (int i = 0; i < 10; ++i) deep = array_value(kArray, 1, deep);
    nested.kvs.push_back(kv("deep", kArray, deep));
    check_refused(file(nested), "nests arrays deeper than the limit of 8");
    // The counts in all, across arrays: strings and arrays inside arrays.
    gguf::Limits few;
    few.max_strings = 2;  // the architecture's string is the first
    few.max_nested_arrays = 2;
    FileSpec strings = good_spec();
    Bytes two_strings;
    put_string(two_strings, "a");
    put_string(two_strings, "b");
    strings.kvs.push_back(kv("t", kArray, array_value(kString, 2, two_strings)));
    CHECK_THROWS_WITH(gguf::parse(file(strings), few),
                      ContainsSubstring("'t''s array of 2 strings brings the header's strings past "
                                        "the limit of 2"));
    FileSpec arrays = good_spec();
    const Bytes empty = array_value(kU8, 0);
    arrays.kvs.push_back(kv("n", kArray, array_value(kArray, 3, cat({empty, empty, empty}))));
    CHECK_THROWS_WITH(gguf::parse(file(arrays), few),
                      ContainsSubstring("'n''s array of 3 arrays brings the header's nested arrays "
                                        "past the limit of 2"));
    CHECK(gguf::parse(file(arrays)).metadata.at("n").items.size() == 3);
  }
  SECTION("value types") {
    FileSpec unknown = good_spec();
    unknown.kvs.push_back(kv("general.x", 13, u32_value(1)));
    check_refused(file(unknown), "metadata key 'general.x' has unknown value type 13");
    FileSpec element = good_spec();
    element.kvs.push_back(kv("general.y", kArray, array_value(99, 1)));
    check_refused(file(element), "'general.y''s array element has unknown value type 99");
    FileSpec twice = good_spec();
    twice.kvs.push_back(kv("general.architecture", kU8, Bytes{1}));
    check_refused(file(twice), "metadata key 'general.architecture' appears twice");
    FileSpec empty = good_spec();
    empty.kvs.push_back(kv("", kU8, Bytes{1}));
    check_refused(file(empty), "metadata key 1 is empty");
  }
  SECTION("versions and magic") {
    FileSpec v4 = good_spec();
    v4.version = 4;
    check_refused(file(v4), "version 4 is newer than this reader, which reads versions 2 and 3");
    FileSpec v1 = good_spec();
    v1.version = 1;
    check_refused(file(v1), "version 1 is not supported");
    FileSpec big_endian = good_spec();
    big_endian.version = 0x03000000;
    check_refused(file(big_endian), "big-endian");
    Bytes magic = file(good_spec());
    magic[0] = 'P';
    magic[1] = 'K';
    check_refused(magic, "does not start with 'GGUF' (its first bytes are 'PKUF')");
    check_refused(Bytes{'G', 'G'}, "the file has 2 bytes, too few for a GGUF header");
  }
  SECTION("tensor types and dims") {
    FileSpec type = good_spec();
    type.infos = {info("w", {4, 2}, 4, 0)};
    check_refused(file(type), "tensor 'w' has unknown ggml type id 4 (known: F32, F16");
    type.infos = {info("w", {4, 2}, 200, 0)};
    check_refused(file(type), "unknown ggml type id 200");
    FileSpec zero = good_spec();
    zero.infos = {info("w", {4, 0}, kF32, 0)};
    check_refused(file(zero), "tensor 'w' has a dimension of 0 (dims [4, 0])");
    FileSpec overflow = good_spec();
    overflow.infos = {info("w", {std::uint64_t{1} << 32, std::uint64_t{1} << 32}, kF32, 0)};
    check_refused(file(overflow), "dims [4294967296, 4294967296] whose product overflows");
    FileSpec bytes_overflow = good_spec();
    bytes_overflow.infos = {info("w", {std::uint64_t{1} << 62}, kF32, 0)};
    check_refused(file(bytes_overflow), "whose size in bytes overflows");
    FileSpec rank = good_spec();
    rank.infos = {info("w", {1, 1, 1, 1, 1}, kF32, 0)};
    check_refused(file(rank), "tensor 'w' has rank 5, more than the limit of 4");
    FileSpec blocks = good_spec();
    blocks.infos = {info("w", {48, 1}, kQ8_0, 0)};
    check_refused(file(blocks), "rows of 48 Q8_0 values, not a whole number of its blocks of 32");
    FileSpec names = good_spec();
    names.infos.push_back(info("w", {2}, kF32, 64));
    check_refused(file(names), "two tensors are named 'w'");
  }
  SECTION("offsets") {
    FileSpec overlap = good_spec();
    overlap.infos.push_back(info("v", {8}, kF32, 0));
    check_refused(file(overlap), "tensors 'w' (bytes 0 to 32) and 'v' (from 0) overlap");
    FileSpec outside = good_spec();
    outside.infos = {info("w", {4, 2}, kF32, 32)};
    check_refused(file(outside),
                  "tensor 'w' (32 bytes at offset 32) runs past the end of the data");
    FileSpec far = good_spec();
    far.infos = {info("w", {4, 2}, kF32, std::numeric_limits<std::uint64_t>::max() - 31)};
    check_refused(file(far), "runs past the end of the data section");
    FileSpec misaligned = good_spec();
    misaligned.infos = {info("w", {4}, kF32, 16)};
    check_refused(file(misaligned), "tensor 'w' has offset 16, not a multiple of the alignment 32");
    FileSpec alignment = good_spec();
    alignment.kvs.push_back(kv("general.alignment", kU32, u32_value(48)));
    check_refused(file(alignment), "general.alignment is 48, not a power of two");
    alignment.kvs.back() = kv("general.alignment", kU64, cat({u32_value(64), u32_value(0)}));
    check_refused(file(alignment), "general.alignment is u64, expected u32");
  }
  SECTION("limits in a prefix") {
    // Refused from the first bytes alone, however large the file claims to be: nothing is asked
    // for or allocated for the claim.
    FileSpec billion = good_spec();
    billion.kvs.push_back(kv("tokenizer.ggml.merges", kArray, array_value(kString, 1000000000)));
    const Bytes bytes = file(billion);
    CHECK_THROWS_WITH(gguf::parse_head(bytes, std::uint64_t{1} << 40),
                      ContainsSubstring("longer than the limit"));
    gguf::Limits small;
    small.max_header_bytes = 100;
    FileSpec long_header = good_spec();
    long_header.kvs.push_back(kv("general.name", kString, string_value(std::string(200, 'x'))));
    CHECK_THROWS_WITH(gguf::parse_head(file(long_header), std::uint64_t{1} << 30, small),
                      ContainsSubstring("longer than the limit of 100 bytes"));
    check_still_works();
  }
  const gguf::Index index = gguf::parse(metadata_file());  // and a real file after them all
  CHECK(index.tensors.size() == 3);
}
