// A GGUF file's tokenizer (text/gguf_tokenizer, text/sentencepiece_merges): tokenizer.ggml.*
// metadata written here by hand (byte-level BPE and SentencePiece), read as the tokenizer.json it
// stands for, its ids and a SentencePiece vocabulary's generated merges worked out by hand; the
// kinds not read say so, malformed metadata is refused naming the key. (Against
// @huggingface/tokenizers on larger vocabularies: tests/js/gguf-tokenizer.test.mjs.)
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/text/gguf_tokenizer.hpp"
#include "attention/text/sentencepiece_merges.hpp"
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
gguf::KeyValue f32s(const std::string& key, const std::vector<float>& values) {
  gguf::Value v;
  v.type = gguf::ValueType::Array;
  v.element_type = gguf::ValueType::F32;
  v.count = values.size();
  for (const float value : values) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &value, 4);
    for (int i = 0; i < 4; ++i) v.bytes.push_back(std::uint8_t(bits >> (8 * i)));
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
  auto bert = entries("gpt-2");
  bert[0] = text("tokenizer.ggml.model", "bert");
  const attn::GgufTokenizer wordpiece = attn::gguf_tokenizer(gguf::Metadata(bert));
  CHECK_FALSE(wordpiece.json);
  CHECK_THAT(wordpiece.missing,
             ContainsSubstring("(tokenizer.ggml.model 'bert') is not read yet; supported: gpt2 "
                               "(byte-level BPE), llama (SentencePiece BPE)"));
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
  auto bad_type = entries("gpt-2");
  bad_type[3] = i32s("tokenizer.ggml.token_type", {1, 1, 1, 1, 7, 1, 3, 4});
  CHECK_THROWS_WITH(attn::gguf_tokenizer(gguf::Metadata(bad_type)),
                    ContainsSubstring("tokenizer.ggml.token_type[4] is 7, not one of llama.cpp's"));
  auto bad_bos = entries("gpt-2");
  bad_bos[5] = u32("tokenizer.ggml.bos_token_id", 99);
  CHECK_THROWS_WITH(
      attn::gguf_tokenizer(gguf::Metadata(bad_bos)),
      ContainsSubstring("tokenizer.ggml.bos_token_id is 99, not one of the 8 tokens"));
}

TEST_CASE("a SentencePiece vocabulary's merges: every split into two pieces, by score", "[gguf]") {
  // a b c ab bc abc ca cab, scores as below: bc and ca tie, abc and cab tie
  const std::vector<std::string> pieces = {"a", "b", "c", "ab", "bc", "abc", "ca", "cab"};
  const std::vector<float> scores = {-10, -11, -12, -1, -2, -3, -2, -3};
  std::vector<std::pair<int, int>> merges;
  for (const attn::PieceMerge m : attn::sentencepiece_merges(pieces, scores))
    merges.emplace_back(m.left, m.right);
  // ab; bc then ca (equal scores: vocabulary order); at -3 the longer left piece first (ab+c,
  // ca+b, in vocabulary order), then a+bc and c+ab
  CHECK(merges ==
        std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {2, 0}, {3, 2}, {6, 1}, {0, 4}, {2, 3}});
  // split at characters, not bytes: '▁é' is '▁' + 'é' only
  const std::vector<std::string> accented = {"\xe2\x96\x81", "\xc3\xa9", "\xe2\x96\x81\xc3\xa9",
                                             "\xc3", "\xa9"};
  const auto two = attn::sentencepiece_merges(accented, {0, 0, -1, 0, 0});
  REQUIRE(two.size() == 1);
  CHECK((two[0].left == 0 && two[0].right == 1));
  // the bytes compared are bounded: x, xx, … x^1000 split every way compare ~3.3·10^8 bytes
  std::vector<std::string> runs;
  for (int i = 1; i <= 1000; ++i) runs.push_back(std::string(std::size_t(i), 'x'));
  CHECK_THROWS_WITH(attn::sentencepiece_merges(runs, std::vector<float>(1000, 0.0f)),
                    ContainsSubstring("pieces are too long in all to generate its merges"));
  // pieces as long that are not prefixes of one another compare nothing: no merges, no refusal
  std::vector<std::string> long_pieces;
  for (int i = 0; i < 300; ++i) long_pieces.push_back(std::to_string(i) + std::string(997, 'x'));
  CHECK(attn::sentencepiece_merges(long_pieces, std::vector<float>(300, 0.0f)).empty());
  CHECK_THROWS_WITH(attn::sentencepiece_merges(pieces, {0.0f}),
                    ContainsSubstring("1 scores for 8 pieces"));
}

namespace {

// A SentencePiece vocabulary: <unk> <s> </s>, the 256 byte tokens (ids 3 to 258), then ▁ a b ▁a ab
// ▁ab, the user-defined <mask> and \t\t.
constexpr std::int32_t kByte0 = 3, kSpace = 259, kA = 260, kB = 261, kSpaceA = 262, kAB = 263,
                       kSpaceAB = 264, kMask = 265, kTabs = 266;

std::vector<gguf::KeyValue> sentencepiece(std::vector<gguf::KeyValue> extra = {}) {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<float> scores = {0, 0, 0};
  std::vector<std::int32_t> types = {2, 3, 3};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    tokens.push_back(name);
    scores.push_back(0);
    types.push_back(6);
  }
  const std::vector<std::pair<std::string, float>> pieces = {{"\xe2\x96\x81", -5},
                                                             {"a", -6},
                                                             {"b", -7},
                                                             {"\xe2\x96\x81"
                                                              "a",
                                                              -1},
                                                             {"ab", -2},
                                                             {"\xe2\x96\x81"
                                                              "ab",
                                                              -3},
                                                             {"<mask>", 0},
                                                             {"\t\t", -4}};
  for (const auto& [piece, score] : pieces) {
    tokens.push_back(piece);
    scores.push_back(score);
    types.push_back(piece == "<mask>" ? 4 : 1);
  }
  std::vector<gguf::KeyValue> out = {
      text("tokenizer.ggml.model", "llama"), texts("tokenizer.ggml.tokens", tokens),
      f32s("tokenizer.ggml.scores", scores), i32s("tokenizer.ggml.token_type", types)};
  for (auto& entry : extra) {
    bool replaced = false;
    for (auto& have : out) {
      if (have.key == entry.key) {
        have = entry;
        replaced = true;
      }
    }
    if (!replaced) out.push_back(entry);
  }
  return out;
}

attn::BpeTokenizer read(const std::vector<gguf::KeyValue>& metadata) {
  const attn::GgufTokenizer tokenizer = attn::gguf_tokenizer(gguf::Metadata(metadata));
  REQUIRE(tokenizer.json);
  return attn::read_tokenizer_json(*tokenizer.json, {});
}

using Ids = std::vector<std::int32_t>;

}  // namespace

TEST_CASE("a GGUF SentencePiece tokenizer is read as LlamaConverter's tokenizer.json", "[gguf]") {
  // llama.cpp's defaults: BOS (id 1) added, a space prefix, no EOS
  const attn::BpeTokenizer llama = read(sentencepiece());
  // '▁ab▁ab': ▁a (best score) twice, then ▁a + b
  CHECK(llama.encode("ab ab") == Ids{1, kSpaceAB, kSpaceAB});
  CHECK(llama.encode("ab ab", false) == Ids{kSpaceAB, kSpaceAB});
  // 'é' is not a piece: its UTF-8 bytes C3 A9
  CHECK(llama.encode("\xc3\xa9") == Ids{1, kSpace, kByte0 + 0xC3, kByte0 + 0xA9});
  // the user-defined token matched in the text, the rest prefixed and merged; control tokens too
  CHECK(llama.encode("<mask>b") == Ids{1, kMask, kSpace, kB});
  CHECK(llama.encode("a</s>") == Ids{1, kSpaceA, 2});
  CHECK(llama.encode("") == Ids{1});
  CHECK(llama.token_bytes(kSpaceAB) == " ab");
  CHECK(llama.token_bytes(kByte0 + 0x0A) == "\n");

  // no space prefix; the EOS added; another BOS id
  const attn::BpeTokenizer plain = read(sentencepiece(
      {boolean("tokenizer.ggml.add_space_prefix", false),
       boolean("tokenizer.ggml.add_eos_token", true), u32("tokenizer.ggml.bos_token_id", 2),
       u32("tokenizer.ggml.eos_token_id", 1)}));
  CHECK(plain.encode("ab a") == Ids{2, kAB, kSpaceA, 1});
  const attn::BpeTokenizer bare =
      read(sentencepiece({boolean("tokenizer.ggml.add_bos_token", false)}));
  CHECK(bare.encode("a") == Ids{kSpaceA});

  // Gemma (GemmaConverter): no prefix whatever add_space_prefix says, and with no '\t' piece the
  // <0x09> token is '\t', so '\t\t' merges
  const attn::BpeTokenizer gemma = read(sentencepiece({text("general.architecture", "gemma2")}));
  CHECK(gemma.encode("ab a") == Ids{1, kAB, kSpaceA});
  CHECK(gemma.encode("\t\t") == Ids{1, kTabs});
  CHECK(llama.encode("\t\t") == Ids{1, kSpace, kByte0 + 9, kByte0 + 9});
}

TEST_CASE("GGUF SentencePiece metadata that does not hang together is refused", "[gguf]") {
  const auto refused = [](std::vector<gguf::KeyValue> metadata, const std::string& message) {
    CHECK_THROWS_WITH(attn::gguf_tokenizer(gguf::Metadata(std::move(metadata))),
                      ContainsSubstring(message));
  };
  auto no_scores = sentencepiece();
  no_scores.erase(no_scores.begin() + 2);
  refused(no_scores, "tokenizer.ggml.scores is missing: a SentencePiece tokenizer");
  refused(sentencepiece({f32s("tokenizer.ggml.scores", {0, 0, 0})}),
          "tokenizer.ggml.scores has 3 entries for 267 tokens");
  std::vector<float> scores(267, 0.0f);
  scores[kA] = std::numeric_limits<float>::quiet_NaN();
  refused(sentencepiece({f32s("tokenizer.ggml.scores", scores)}),
          "tokenizer.ggml.scores[260] is not a finite number");
  refused(sentencepiece({i32s("tokenizer.ggml.scores", std::vector<std::int32_t>(267, 0))}),
          "tokenizer.ggml.scores");
  std::vector<std::int32_t> types(267, 1);
  types[kB] = 9;
  refused(sentencepiece({i32s("tokenizer.ggml.token_type", types)}),
          "tokenizer.ggml.token_type[261] is 9, not one of llama.cpp's token types");
  refused(sentencepiece({u32("tokenizer.ggml.eos_token_id", 300),
                         boolean("tokenizer.ggml.add_eos_token", true)}),
          "tokenizer.ggml.eos_token_id is 300, not one of the 267 tokens");

  std::vector<std::string> many;
  for (std::size_t i = 0; i <= (std::size_t{1} << 20); ++i) many.push_back(std::to_string(i));
  refused({text("tokenizer.ggml.model", "llama"), texts("tokenizer.ggml.tokens", many),
           f32s("tokenizer.ggml.scores", std::vector<float>(many.size(), 0.0f))},
          "tokenizer.ggml.tokens has 1048577 tokens, more than 1048576");

  auto metadata = sentencepiece();
  metadata[1].value.strings[kB] = "a";
  refused(metadata, "tokenizer.ggml.tokens[261] 'a' is token 260 too");
  metadata[1].value.strings[kB] = "";
  refused(metadata, "tokenizer.ggml.tokens[261] is empty");
  metadata[1].value.strings[kB] = std::string(1025, 'b');
  refused(metadata, "tokenizer.ggml.tokens[261] is longer than 1024 bytes");
  metadata[1].value.strings[kB] = "\xff";
  refused(metadata, "tokenizer.ggml.tokens[261] is not valid UTF-8");

  // some byte tokens but not all: not read (the model loads; tokenize says why)
  auto partial = sentencepiece();
  partial[1].value.strings[kByte0 + 0x80] = "x80";
  const attn::GgufTokenizer missing = attn::gguf_tokenizer(gguf::Metadata(partial));
  CHECK_FALSE(missing.json);
  CHECK_THAT(missing.missing, ContainsSubstring("has byte tokens for byte fallback but not 1 of "
                                                "them (<0x80>)"));
  // no byte tokens at all: a character not in the vocabulary is the unknown token
  auto none = sentencepiece();
  for (int b = 0; b < 256; ++b)
    none[1].value.strings[std::size_t(kByte0 + b)] = "x" + std::to_string(b);
  CHECK(read(none).encode("\xc3\xa9\xc3\xa9 a") == Ids{1, kSpace, 0, kSpaceA});
}
