// Tests for the word and character tokenizers, UTF-8 validation and the FNV-1a token ids.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "attention/error.hpp"
#include "attention/text/tokenizer.hpp"

using attn::TokenizerKind;
using Catch::Matchers::ContainsSubstring;

namespace {

std::vector<std::string> texts(std::string_view input, TokenizerKind kind = TokenizerKind::Word) {
  std::vector<std::string> out;
  for (const attn::Token& token : attn::tokenize(input, kind)) out.push_back(token.text);
  return out;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("word tokenizer splits words and punctuation", "[tokenizer]") {
  CHECK(texts("The bank will not loan money.") ==
        Strings{"The", "bank", "will", "not", "loan", "money", "."});
  CHECK(texts("Hello,world") == Strings{"Hello", ",", "world"});
  CHECK(texts("a+b=c (x) [y]!?") ==
        Strings{"a", "+", "b", "=", "c", "(", "x", ")", "[", "y", "]", "!", "?"});
  CHECK(texts("snake_case42 and 3.14") == Strings{"snake_case42", "and", "3", ".", "14"});
}

TEST_CASE("word tokenizer drops ASCII whitespace", "[tokenizer]") {
  CHECK(texts("  one\ttwo\nthree\r\n\v\ffour  ") == Strings{"one", "two", "three", "four"});
  CHECK(texts("").empty());
  CHECK(texts(" \t\n ").empty());
}

TEST_CASE("word tokenizer keeps apostrophes between word characters", "[tokenizer]") {
  CHECK(texts("don't stop, caf\xC3\xA9!") == Strings{"don't", "stop", ",", "caf\xC3\xA9", "!"});
  CHECK(texts("rock'n'roll") == Strings{"rock'n'roll"});
  CHECK(texts("it\xE2\x80\x99s") == Strings{"it\xE2\x80\x99s"});  // U+2019 RIGHT SINGLE QUOTE
  CHECK(texts("dogs' 'quoted'") == Strings{"dogs", "'", "'", "quoted", "'"});
  CHECK(texts("\xE2\x80\x99tis\xE2\x80\x99") == Strings{"\xE2\x80\x99", "tis", "\xE2\x80\x99"});
  CHECK(texts("a''b") == Strings{"a", "'", "'", "b"});
}

TEST_CASE("word tokenizer treats non-ASCII code points as word characters", "[tokenizer]") {
  CHECK(texts("na\xC3\xAFve \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xF0\x9F\x98\x80!") ==
        Strings{"na\xC3\xAFve", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", "\xF0\x9F\x98\x80", "!"});
}

TEST_CASE("tokens carry their byte offsets", "[tokenizer]") {
  const std::string text = "don't stop, caf\xC3\xA9!";
  const auto tokens = attn::tokenize(text, TokenizerKind::Word);
  REQUIRE(tokens.size() == 5);
  const std::vector<std::pair<std::size_t, std::size_t>> expected = {
      {0, 5}, {6, 10}, {10, 11}, {12, 17}, {17, 18}};  // "café" is 5 bytes: é is C3 A9
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    CHECK(tokens[i].begin == expected[i].first);
    CHECK(tokens[i].end == expected[i].second);
    CHECK(text.substr(tokens[i].begin, tokens[i].end - tokens[i].begin) == tokens[i].text);
  }
}

TEST_CASE("character tokenizer yields one token per code point, spaces included", "[tokenizer]") {
  const std::string text =
      "a\xC3\xB1"
      "b c";
  const auto tokens = attn::tokenize(text, TokenizerKind::Character);
  REQUIRE(tokens.size() == 5);
  CHECK(texts(text, TokenizerKind::Character) == Strings{"a", "\xC3\xB1", "b", " ", "c"});
  CHECK(tokens[1].begin == 1);
  CHECK(tokens[1].end == 3);
  CHECK(tokens[4].begin == 5);
  CHECK(texts("\xF0\x9F\x98\x80\n", TokenizerKind::Character) == Strings{"\xF0\x9F\x98\x80", "\n"});
  CHECK(texts("", TokenizerKind::Character).empty());
}

TEST_CASE("tokenize rejects invalid UTF-8 and names the byte offset", "[tokenizer]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ab\xC3", "invalid UTF-8 at byte 2: truncated sequence"},
      {"a\xC3(", "invalid UTF-8 at byte 1: truncated sequence (byte 2 is not a continuation"},
      {"\xC0\xAF", "invalid UTF-8 at byte 0: overlong encoding"},
      {"xy\xE0\x80\xAF", "invalid UTF-8 at byte 2: overlong encoding"},
      {"x\xED\xA0\x80", "invalid UTF-8 at byte 1: encoded UTF-16 surrogate"},
      {"\xF4\x90\x80\x80", "invalid UTF-8 at byte 0: code point above U+10FFFF"},
      {"ok \x80", "invalid UTF-8 at byte 3: unexpected continuation byte"},
      {"\xFF", "invalid UTF-8 at byte 0: invalid lead byte"},
  };
  for (const auto& [text, phrase] : cases) {
    INFO("phrase: " << phrase);
    CHECK_THROWS_WITH(attn::tokenize(text, TokenizerKind::Word), ContainsSubstring(phrase));
    CHECK_THROWS_WITH(attn::tokenize(text, TokenizerKind::Character), ContainsSubstring(phrase));
  }
  // The check also covers the code point after an apostrophe.
  CHECK_THROWS_WITH(attn::tokenize("a'\xC3", TokenizerKind::Word), ContainsSubstring("at byte 2"));
}

TEST_CASE("tokenize enforces max_tokens", "[tokenizer]") {
  CHECK(attn::tokenize("a b", TokenizerKind::Word, 2).size() == 2);
  CHECK_THROWS_WITH(attn::tokenize("a b c", TokenizerKind::Word, 2),
                    ContainsSubstring("text has more than 2 tokens"));
  CHECK_THROWS_AS(attn::tokenize("abc", TokenizerKind::Character, 2), attn::Error);
}

TEST_CASE("token_id is case-insensitive FNV-1a modulo the vocabulary", "[tokenizer]") {
  CHECK(attn::token_id("Bank", 1000) == attn::token_id("bank", 1000));
  CHECK(attn::token_id("BANK", 4096) == attn::token_id("bank", 4096));
  CHECK(attn::token_id("bank", 1u << 31) != attn::token_id("boat", 1u << 31));

  // FNV-1a 32 of "a", by hand: offset basis 0x811c9dc5 xor 0x61 = 0x811c9da4; times the prime
  // 0x01000193 = 2^24 + 0x193: (0x811c9da4 << 24) + 0x811c9da4 * 0x193 (mod 2^32)
  //            = 0xa4000000 + 0x400c292c = 0xe40c292c.
  // With vocab_size = 2^32 - 1 (> every hash below it) the id is the hash itself.
  constexpr std::uint32_t kAll = 0xFFFFFFFFu;
  CHECK(attn::token_id("a", kAll) == 0xe40c292cu);
  CHECK(attn::token_id("A", kAll) == 0xe40c292cu);
  CHECK(attn::token_id("", kAll) == 0x811c9dc5u);        // the offset basis
  CHECK(attn::token_id("foobar", kAll) == 0xbf9cf968u);  // the published FNV-1a test vector
  CHECK(attn::token_id("a", 1000) == 0xe40c292cu % 1000);
  CHECK(attn::token_id("anything", 1) == 0);
  // Only ASCII letters fold: É (C3 89) and é (C3 A9) stay different.
  CHECK(attn::token_id("\xC3\x89", kAll) != attn::token_id("\xC3\xA9", kAll));
}

TEST_CASE("token_id rejects an empty vocabulary", "[tokenizer]") {
  CHECK_THROWS_WITH(attn::token_id("bank", 0), ContainsSubstring("vocab_size must be at least 1"));
}
