// Tests for reading text in a character model's alphabet: strict reading names the character,
// mapping lowercases, finds look-alikes and marks substitutes, one token per code point.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/text/alphabet.hpp"

using attn::AlphabetText;
using attn::CharacterMapping;
using attn::read_in_alphabet;
using attn::UnknownCharacters;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::Equals;

namespace {

// The shipped english model's alphabet (the English task's vocabulary).
const std::string kEnglish = " abcdefghijklmnopqrstuvwxyz0123456789.,;:!?'\"-()";
const std::string kMixed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

// Each character's index in `alphabet`, by hand: the ids a strict read of `text` must give.
std::vector<std::int32_t> indices(const std::string& text, const std::string& alphabet) {
  std::vector<std::int32_t> ids;
  for (const char c : text) ids.push_back(static_cast<std::int32_t>(alphabet.find(c)));
  return ids;
}

AlphabetText map(const std::string& text, const std::string& alphabet = kEnglish) {
  return read_in_alphabet(text, alphabet, "the english model", UnknownCharacters::Map);
}

}  // namespace

TEST_CASE("text in the alphabet reads as itself in both policies", "[alphabet]") {
  const std::string text = "the bank will not loan money, said the devil.";
  for (const auto unknown : {UnknownCharacters::Error, UnknownCharacters::Map}) {
    const AlphabetText read = read_in_alphabet(text, kEnglish, "the english model", unknown);
    CHECK(read.ids == indices(text, kEnglish));
    REQUIRE(read.characters.size() == text.size());
    CHECK(read.characters[0] == "t");
    CHECK(read.characters[3] == " ");
    CHECK(read.mapped.empty());
    CHECK(read.note.empty());
  }
}

TEST_CASE("strict reading names the first character outside the alphabet", "[alphabet]") {
  const auto strict = [](const std::string& text) {
    return read_in_alphabet(text, kEnglish, "the english model", UnknownCharacters::Error);
  };
  CHECK_THROWS_WITH(strict("The bank"),
                    Equals("character \"T\" at position 0 is not in the english model's alphabet "
                           "\" abcdefghijklmnopqrstuvwxyz0123456789.,;:!?'\\\"-()\""));
  // Positions count characters (code points), not bytes.
  CHECK_THROWS_WITH(strict("caf\xC3\xA9!"), ContainsSubstring("\"\xC3\xA9\" U+00E9 at position 3"));
  CHECK_THROWS_WITH(strict("\xC3\xA9\xE2\x82\xAC"), ContainsSubstring("U+00E9 at position 0"));
  CHECK_THROWS_WITH(strict("a\tb"), ContainsSubstring("character U+0009 at position 1"));
  CHECK_THROWS_WITH(strict("ab\xFF"), ContainsSubstring("invalid UTF-8 at byte 2"));
}

TEST_CASE("capitals read as lowercase letters", "[alphabet]") {
  const AlphabetText read = map("The bank will not loan money.");
  CHECK(read.ids == indices("the bank will not loan money.", kEnglish));
  REQUIRE(read.mapped.size() == 1);
  CHECK(read.mapped[0].position == 0);
  CHECK(read.mapped[0].typed == "T");
  CHECK(read.mapped[0].read == "t");
  CHECK(read.mapped[0].how == CharacterMapping::Lowercase);
  CHECK(read.characters[0] == "t");
  CHECK(read.note == "Read in the english model's alphabet: 1 capital as lowercase.");
  CHECK(map("AB").note == "Read in the english model's alphabet: 2 capitals as lowercase.");
}

TEST_CASE("an alphabet with capitals keeps them; mapping only touches what it lacks",
          "[alphabet]") {
  const AlphabetText read = map("The cat", kMixed);
  // "T" is in the alphabet; the space is not, and neither " " nor "?" is: the first character.
  CHECK(read.ids == std::vector<std::int32_t>{45, 7, 4, 0, 2, 0, 19});
  REQUIRE(read.mapped.size() == 1);
  CHECK(read.mapped[0].position == 3);
  CHECK(read.mapped[0].read == "a");
  CHECK(read.mapped[0].how == CharacterMapping::Replaced);
  // An alphabet with "é" reads "É" as its lowercase, not as "e".
  const AlphabetText accented = map("\xC3\x89t\xC3\xA9", "et\xC3\xA9");
  CHECK(accented.ids == std::vector<std::int32_t>{2, 1, 2});
  REQUIRE(accented.mapped.size() == 1);
  CHECK(accented.mapped[0].how == CharacterMapping::Lowercase);
  CHECK(accented.mapped[0].read == "\xC3\xA9");
}

TEST_CASE("look-alikes read as the nearest character; the rest as marked substitutes",
          "[alphabet]") {
  // Caf\u00E9 \u2014 \u201Cok\u201D \u20AC5<TAB>\u00C9t\u00E9\u2026 [x]
  const std::string typed =
      "Caf\xC3\xA9 \xE2\x80\x94 \xE2\x80\x9Cok\xE2\x80\x9D \xE2\x82\xAC"
      "5\t\xC3\x89t\xC3\xA9\xE2\x80\xA6 [x] \xF0\x9F\x98\x80";
  const AlphabetText read = map(typed);
  const std::string expected = "cafe - \"ok\"  5 ete. (x)  ";
  CHECK(read.ids == indices(expected, kEnglish));
  std::string characters;
  for (const auto& c : read.characters) characters += c;
  CHECK(characters == expected);
  struct Want {
    std::size_t position;
    std::string typed, read;
    CharacterMapping how;
  };
  const std::vector<Want> want = {
      {0, "C", "c", CharacterMapping::Lowercase},
      {3, "\xC3\xA9", "e", CharacterMapping::Similar},
      {5, "\xE2\x80\x94", "-", CharacterMapping::Similar},
      {7, "\xE2\x80\x9C", "\"", CharacterMapping::Similar},
      {10, "\xE2\x80\x9D", "\"", CharacterMapping::Similar},
      {12, "\xE2\x82\xAC", " ", CharacterMapping::Replaced},
      {14, "\t", " ", CharacterMapping::Similar},
      {15, "\xC3\x89", "e", CharacterMapping::Similar},
      {17, "\xC3\xA9", "e", CharacterMapping::Similar},
      {18, "\xE2\x80\xA6", ".", CharacterMapping::Similar},
      {20, "[", "(", CharacterMapping::Similar},
      {22, "]", ")", CharacterMapping::Similar},
      {24, "\xF0\x9F\x98\x80", " ", CharacterMapping::Replaced},
  };
  REQUIRE(read.mapped.size() == want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    INFO("mapped " << k);
    CHECK(read.mapped[k].position == want[k].position);
    CHECK(read.mapped[k].typed == want[k].typed);
    CHECK(read.mapped[k].read == want[k].read);
    CHECK(read.mapped[k].how == want[k].how);
  }
  // Distinct pairs, the first three named: é, —, “ (then ”, tab, É, … and the brackets).
  CHECK(read.note ==
        "Read in the english model's alphabet: 1 capital as lowercase; \xC3\xA9 \u2192 e, "
        "\xE2\x80\x94 \u2192 -, \xE2\x80\x9C \u2192 \" and 6 more; \xE2\x82\xAC \u2192 \u2423, "
        "\xF0\x9F\x98\x80 \u2192 \u2423 (not in the alphabet: marked).");
}

TEST_CASE("malformed UTF-8 maps to marked substitutes, one per invalid subpart", "[alphabet]") {
  const AlphabetText read =
      map("ab\xFF"
          "c");
  CHECK(read.ids == indices("ab c", kEnglish));
  REQUIRE(read.mapped.size() == 1);
  CHECK(read.mapped[0].typed == "\xEF\xBF\xBD");
  CHECK(read.mapped[0].how == CharacterMapping::Replaced);
}

TEST_CASE("policy names and alphabet errors", "[alphabet]") {
  CHECK(attn::parse_unknown_characters("map") == UnknownCharacters::Map);
  CHECK_THROWS_WITH(attn::parse_unknown_characters("ignore"),
                    Equals("unknown unknown-character policy 'ignore': expected 'error' or 'map'"));
  CHECK_THROWS_WITH(map("a", ""), ContainsSubstring("alphabet is empty"));
  CHECK_THROWS_WITH(map("a", "a\xFF"), ContainsSubstring("alphabet is not valid UTF-8"));
  // Without " " in the alphabet, "?" is the substitute.
  const AlphabetText read = map("a\xE2\x82\xAC", "a?");
  CHECK(read.ids == std::vector<std::int32_t>{0, 1});
}
