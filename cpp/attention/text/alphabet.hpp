// A character model's alphabet: text read as token ids, each character as itself or, on
// request, mapped into the alphabet (lowercased, a look-alike, or a marked substitute).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attention/name_table.hpp"

namespace attn {

// What reading does with a character outside the alphabet: throw naming it ("error"), or read
// another character of the alphabet in its place ("map").
enum class UnknownCharacters { Error, Map };
std::span<const NamedKind<UnknownCharacters>> unknown_character_policies();
UnknownCharacters parse_unknown_characters(std::string_view name);

// How a mapped character was read, tried in this order (each only when the character before it
// is not in the alphabet):
//   Lowercase  an uppercase letter (ASCII or Latin-1) as its lowercase letter: "T" -> "t"
//   Similar    a look-alike, after lowercasing: an accented Latin-1 letter as its base letter
//              ("É" -> "e"), curly quotes as straight ones, dashes as "-", "…" as ".",
//              tabs, line breaks and other spaces as " ", brackets as parentheses
//   Replaced   anything else, as the substitute: " " if the alphabet has it, else "?", else the
//              alphabet's first character (the page marks these chips)
enum class CharacterMapping { Lowercase, Similar, Replaced };
std::span<const NamedKind<CharacterMapping>> character_mappings();

struct MappedCharacter {
  std::size_t position = 0;  // index of the character (code point) in the text
  std::string typed;         // the character as typed (UTF-8; U+FFFD for malformed UTF-8)
  std::string read;          // the alphabet's character read in its place
  CharacterMapping how = CharacterMapping::Replaced;
};

struct AlphabetText {
  std::vector<std::int32_t> ids;        // [characters]: each read character's index in the alphabet
  std::vector<std::string> characters;  // [characters]: the read characters (UTF-8)
  std::vector<MappedCharacter> mapped;  // the characters not read as typed, in text order
  std::string note;  // one sentence: what was mapped and why; empty when nothing was
};

// Reads `text` (UTF-8) one code point per token in `alphabet` (UTF-8, distinct characters).
// `owner` names the alphabet's model or task in messages ("the english model"). With
// UnknownCharacters::Error a character outside the alphabet throws attn::Error:
//   character "T" at position 0 is not in the english model's alphabet " abc…"
// and malformed UTF-8 throws naming its byte offset; with Map both are read as described above.
AlphabetText read_in_alphabet(std::string_view text, std::string_view alphabet,
                              std::string_view owner, UnknownCharacters unknown);

}  // namespace attn
