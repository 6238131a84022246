// A GGUF file's tokenizer (text/gguf_tokenizer): tokenizer.ggml.* metadata written here by hand,
// read as the tokenizer.json it stands for, its ids worked out by hand; the kinds not read say so.
// (Against @huggingface/tokenizers on real layouts: tests/js/gguf-tokenizer.test.mjs.)
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/text/gguf_tokenizer.hpp"
#include "attention/text/tokenizer_json.hpp"

namespace gguf = attn::gguf;
using Catch::Matchers::ContainsSubstring;

namespace {

gguf::KeyValue text(const std::string& key, const std::string& value) {
  gguf::Value v;
  v.type = gguf::ValueType::String;
  v.strings = {value};
  return {key, v};
}
gguf::KeyValue texts(const std::string& key, const std::vector<std::string>& values) {
  gguf::Value v;
  v.type = gguf::ValueType::Array;
  v.element_type = gguf::ValueType::String;
  v.count = values.size();
  v.strings = values;
  return {key, v};
}
gguf::KeyValue i32s(const std::string& key, const std::vector<std::int32_t>& values) {
  gguf::Value v;
  v.type = gguf::ValueType::Array;
  v.element_type = gguf::ValueType::I32;
  v.count = values.size();
  for (const std::int32_t value : values) {
    for (int i = 0; i < 4; ++i) v.bytes.push_back(std::uint8_t(std::uint32_t(value) >> (8 * i)));
  }
  return {key, v};
}
gguf::KeyValue u32(const std::string& key, std::uint32_t value) {
  gguf::Value v;
  v.type = gguf::ValueType::U32;
  for (int i = 0; i < 4; ++i) v.bytes.push_back(std::uint8_t(value >> (8 * i)));
  return {key, v};
}
gguf::KeyValue boolean(const std::string& key, bool value) {
  gguf::Value v;
  v.type = gguf::ValueType::Bool;
  v.bytes = {std::uint8_t(value)};
  return {key, v};
}

// A byte-level vocabulary: a b c ab Ġ Ġab, a control token and a user-defined one; merges a+b,
// Ġ+ab; BOS added.
std::vector<gguf::KeyValue> entries(const std::string& pre) {
  return {text("tokenizer.ggml.model", "gpt2"),
          text("tokenizer.ggml.pre", pre),
          texts("tokenizer.ggml.tokens", {"a", "b", "c", "ab", "\xc4\xa0",
                                          "\xc4\xa0"
                                          "ab",
                                          "<|bos|>", "cab"}),
          i32s("tokenizer.ggml.token_type", {1, 1, 1, 1, 1, 1, 3, 4}),
          texts("tokenizer.ggml.merges", {"a b", "\xc4\xa0 ab"}),
          u32("tokenizer.ggml.bos_token_id", 6),
          boolean("tokenizer.ggml.add_bos_token", true)};
}

}  // namespace

TEST_CASE("a GGUF byte-level tokenizer is read as its tokenizer.json", "[gguf]") {
  const attn::GgufTokenizer read = attn::gguf_tokenizer(gguf::Metadata(entries("gpt-2")));
  REQUIRE(read.json);
  const attn::BpeTokenizer tokenizer = attn::read_tokenizer_json(*read.json, {});
  // BOS; "ab" merged; " ab" merged with its space (Ġab); "cab" the user-defined token whole
  CHECK(tokenizer.encode("ab ab") == std::vector<std::int32_t>{6, 3, 5});
  CHECK(tokenizer.encode("cab") == std::vector<std::int32_t>{6, 7});
  CHECK(tokenizer.encode("<|bos|>ab", true) == std::vector<std::int32_t>{6, 6, 3});
  CHECK(tokenizer.encode("ab", false) == std::vector<std::int32_t>{3});
  // without add_bos_token: no BOS
  auto no_bos = entries("llama-bpe");
  no_bos.pop_back();
  const attn::GgufTokenizer llama3 = attn::gguf_tokenizer(gguf::Metadata(no_bos));
  REQUIRE(llama3.json);
  CHECK(attn::read_tokenizer_json(*llama3.json, {}).encode("ab ab") ==
        std::vector<std::int32_t>{3, 5});
}

TEST_CASE("GGUF tokenizers not read say so, malformed ones are refused", "[gguf]") {
  auto spm = entries("gpt-2");
  spm[0] = text("tokenizer.ggml.model", "llama");
  const attn::GgufTokenizer sentencepiece = attn::gguf_tokenizer(gguf::Metadata(spm));
  CHECK_FALSE(sentencepiece.json);
  CHECK_THAT(sentencepiece.missing,
             ContainsSubstring("tokenizer.ggml.model 'llama', SentencePiece) is not read yet"));
  const attn::GgufTokenizer unknown = attn::gguf_tokenizer(gguf::Metadata(entries("tekken")));
  CHECK_FALSE(unknown.json);
  CHECK_THAT(unknown.missing,
             ContainsSubstring("(tokenizer.ggml.pre 'tekken') is not read yet; supported: gpt-2, "
                               "smollm, llama-bpe, qwen2"));
  CHECK_THAT(attn::gguf_tokenizer(gguf::Metadata(std::vector<gguf::KeyValue>{})).missing,
             ContainsSubstring("this GGUF file has no tokenizer"));
  auto short_types = entries("gpt-2");
  short_types[3] = i32s("tokenizer.ggml.token_type", {1, 1});
  CHECK_THROWS_WITH(attn::gguf_tokenizer(gguf::Metadata(short_types)),
                    ContainsSubstring("tokenizer.ggml.token_type has 2 entries for 8 tokens"));
  auto bad_bos = entries("gpt-2");
  bad_bos[5] = u32("tokenizer.ggml.bos_token_id", 99);
  CHECK_THROWS_WITH(
      attn::gguf_tokenizer(gguf::Metadata(bad_bos)),
      ContainsSubstring("tokenizer.ggml.bos_token_id is 99, not one of the 8 tokens"));
}
