// GPT-2's byte-level BPE pieces: TextDecoder-style UTF-8 replacement, the byte-to-unicode map,
// the pre-tokenizer regex by hand, merges by rank, and the tokenizer's errors. (Ids against the
// reference tokenizer on 1 500 strings: tests/js/bpe.test.mjs.)
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/text/bpe_tokenizer.hpp"
#include "attention/text/unicode_classes.hpp"
#include "attention/utf8.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

// Every byte's character, one per line (ids 0–255 in byte order), then the extra tokens.
std::string byte_vocab(const std::vector<std::string>& extra) {
  std::string vocab;
  for (int b = 0; b < 256; ++b) {
    const char32_t cp = attn::byte_to_unicode(std::uint8_t(b));
    // UTF-8 of cp (at most U+0143)
    if (cp < 0x80) {
      vocab += char(cp);
    } else {
      vocab += char(0xC0 | (cp >> 6));
      vocab += char(0x80 | (cp & 0x3F));
    }
    vocab += '\n';
  }
  for (const auto& token : extra) vocab += token + "\n";
  return vocab;
}

}  // namespace

TEST_CASE("invalid UTF-8 becomes U+FFFD per maximal subpart, as TextDecoder", "[bpe]") {
  using attn::decode_utf8_replacing;
  CHECK(decode_utf8_replacing("a\xC3\xA9") == U"a\u00E9");
  CHECK(decode_utf8_replacing("\xF0\x9F\x98") == U"\uFFFD");              // truncated 4-byte: one
  CHECK(decode_utf8_replacing("\xE0\x80\x80") == U"\uFFFD\uFFFD\uFFFD");  // overlong: each byte
  CHECK(decode_utf8_replacing("\xED\xA0\x80") == U"\uFFFD\uFFFD\uFFFD");  // a surrogate
  CHECK(decode_utf8_replacing("\xF4\x90\x80\x80") == U"\uFFFD\uFFFD\uFFFD\uFFFD");
  CHECK(decode_utf8_replacing("\xE2\x82 b") == U"\uFFFD b");
  CHECK(decode_utf8_replacing("\xFF\x80") == U"\uFFFD\uFFFD");
  CHECK(decode_utf8_replacing("\xF0\x9F\x91\x8D") == U"\U0001F44D");
}

TEST_CASE("GPT-2's byte-to-unicode map", "[bpe]") {
  CHECK(attn::byte_to_unicode('a') == U'a');
  CHECK(attn::byte_to_unicode(' ') == U'\u0120');   // Ġ
  CHECK(attn::byte_to_unicode('\n') == U'\u010A');  // Ċ
  CHECK(attn::byte_to_unicode(0) == U'\u0100');
  CHECK(attn::byte_to_unicode(0xAD) == U'\u0143');  // the last one mapped
  CHECK(attn::byte_to_unicode(0xFF) == U'\u00FF');
}

TEST_CASE("the pre-tokenizer splits as GPT-2's regex", "[bpe]") {
  using V = std::vector<std::string>;
  CHECK(attn::gpt2_pre_tokenize("Hello world's  \n\n  123") ==
        V{"Hello", " world", "'s", "  \n\n ", " 123"});
  CHECK(attn::gpt2_pre_tokenize("I'm you're they'LL") ==
        V{"I", "'m", " you", "'re", " they", "'", "LL"});
  CHECK(attn::gpt2_pre_tokenize("a  ") == V{"a", "  "});
  CHECK(attn::gpt2_pre_tokenize("x!!? 42,5") == V{"x", "!!?", " 42", ",", "5"});
  CHECK(attn::gpt2_pre_tokenize("caf\xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD") ==
        V{"caf\xC3\xA9", " \xE4\xBD\xA0\xE5\xA5\xBD"});
  CHECK(attn::gpt2_pre_tokenize("\xFF"
                                "a") == V{"\xEF\xBF\xBD", "a"});
  CHECK(attn::gpt2_pre_tokenize("").empty());
  CHECK(attn::is_letter(U'\u00E9'));
  CHECK(attn::is_number(U'\u0663'));
  CHECK(attn::is_js_space(U'\u3000'));
  CHECK(attn::is_js_space(U'\uFEFF'));
  CHECK_FALSE(attn::is_js_space(U'\u200B'));
}

TEST_CASE("merges apply by rank and give the vocabulary's ids", "[bpe]") {
  // ids 256: "he", 257: "ll", 258: "hell", 259: "hello", 260: "Ġhe"
  attn::BpeTokenizer tokenizer(byte_vocab({"he", "ll", "hell", "hello", "\xC4\xA0he"}),
                               "#version: 0.2\nh e\nl l\nhe ll\nhell o\n\xC4\xA0 he\n");
  CHECK(tokenizer.vocab_size() == 261);
  CHECK(tokenizer.encode("hello") == std::vector<std::int32_t>{259});
  CHECK(tokenizer.encode("hellx he") == std::vector<std::int32_t>{258, 'x', 260});
  CHECK(tokenizer.token_bytes(260) == " he");
  CHECK_THROWS_WITH(tokenizer.check_fits(100),
                    ContainsSubstring("the tokenizer has 261 tokens but the model's vocabulary has "
                                      "100"));
  CHECK_NOTHROW(tokenizer.check_fits(261));
}

TEST_CASE("an output id in the model's padding rows reads as no token; past them it is refused",
          "[bpe]") {
  attn::BpeTokenizer tokenizer(byte_vocab({"he"}), "#version: 0.2\nh e\n");
  tokenizer.check_fits(264);  // the model's embedding rounded up past the tokenizer's 257 ids
  CHECK(tokenizer.output_text(256) == "he");
  CHECK(tokenizer.output_text(257) == "[id 257: no token]");
  CHECK(tokenizer.output_text(263) == "[id 263: no token]");
  CHECK_THROWS_WITH(tokenizer.output_text(264), ContainsSubstring("token id 264 is out of range"));
  CHECK_THROWS_WITH(tokenizer.token_text(257), ContainsSubstring("token id 257 is out of range"));
}

TEST_CASE("a tokenizer that does not hang together is refused", "[bpe]") {
  CHECK_THROWS_WITH(attn::BpeTokenizer("a\nb\n", ""), ContainsSubstring("has no token for byte 0"));
  CHECK_THROWS_WITH(attn::BpeTokenizer(byte_vocab({}), "h e\n"),
                    ContainsSubstring("merge line 1 'h e' joins tokens that are not in the "
                                      "vocabulary"));
  CHECK_THROWS_WITH(attn::BpeTokenizer(byte_vocab({"he"}), "he\n"),
                    ContainsSubstring("merge line 1 'he' is not two tokens"));
  CHECK_THROWS_WITH(attn::BpeTokenizer(byte_vocab({"a"}), ""),
                    ContainsSubstring("token 256 'a' appears twice"));
}

TEST_CASE("token_text: a token's bytes as text, or <0xNN> for part of a character", "[bpe]") {
  // id 256: "é" (bytes C3 A9, written "Ã©" in the byte-to-unicode alphabet), 257: "Ġa" (" a").
  const attn::BpeTokenizer tokenizer(byte_vocab({"\xC3\x83\xC2\xA9",
                                                 "\xC4\xA0"
                                                 "a"}),
                                     "\xC3\x83 \xC2\xA9\n\xC4\xA0 a\n");
  CHECK(tokenizer.token_text('a') == "a");
  CHECK(tokenizer.token_text(0xC3) == "<0xC3>");
  CHECK(tokenizer.token_text(0xA9) == "<0xA9>");
  CHECK(tokenizer.token_text(0) == std::string(1, '\0'));  // a control byte is valid UTF-8
  CHECK(tokenizer.token_text(256) == "\xC3\xA9");
  CHECK(tokenizer.token_text(257) == " a");
  CHECK(tokenizer.encode("\xC3\xA9 a") == std::vector<std::int32_t>{256, 257});
  CHECK_THROWS_AS(tokenizer.token_text(258), attn::Error);
}
