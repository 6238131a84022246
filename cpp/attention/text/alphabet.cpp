// Reading text in a character model's alphabet (see alphabet.hpp).
#include "attention/text/alphabet.hpp"

#include <algorithm>

#include "attention/error.hpp"
#include "attention/utf8.hpp"

namespace attn {
namespace {

constexpr std::size_t kNoteExamples = 3;  // distinct characters a note names per kind

// An uppercase ASCII or Latin-1 letter's lowercase letter, else the character itself.
char32_t lowercase(char32_t c) {
  if (c >= U'A' && c <= U'Z') return c + 0x20;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 0x20;  // À … Þ, not ×
  return c;
}

// A look-alike in plain ASCII of a (lowercase) character, or 0 when it has none.
char32_t look_alike(char32_t c) {
  // à á â ã ä å æ ç è é ê ë ì í î ï ð ñ ò ó ô õ ö ÷ ø ù ú û ü ý þ ÿ (U+00E0 … U+00FF)
  static constexpr char kLatin1[] = "aaaaaaaceeeeiiiidnooooo\0ouuuuy\0y";
  if (c >= 0xE0 && c <= 0xFF) return static_cast<unsigned char>(kLatin1[c - 0xE0]);
  if (c == 0xDF) return U's';  // ß
  switch (c) {
    case U'\t':
    case U'\n':
    case U'\r':
    case 0x0B:
    case 0x0C:
    case 0xA0:
    case 0x2007:
    case 0x2009:
    case 0x200A:
    case 0x202F:
    case 0x2002:
    case 0x2003:
    case 0x3000:
      return U' ';
    case 0x2018:
    case 0x2019:
    case 0x201A:
    case 0x201B:
    case 0x2032:
    case 0xB4:
    case U'`':
      return U'\'';
    case 0x201C:
    case 0x201D:
    case 0x201E:
    case 0x201F:
    case 0x2033:
    case 0xAB:
    case 0xBB:
      return U'"';
    case 0x2010:
    case 0x2011:
    case 0x2012:
    case 0x2013:
    case 0x2014:
    case 0x2015:
    case 0x2212:
      return U'-';
    case 0x2026:
      return U'.';
    case U'[':
    case U'{':
      return U'(';
    case U']':
    case U'}':
      return U')';
    default:
      return 0;
  }
}

std::string utf8_of(char32_t c) {
  std::string out;
  append_utf8(out, c);
  return out;
}

// How a character looks in a message: "x", with its code point when it is not printable ASCII.
std::string shown(char32_t c) {
  if (c >= 0x20 && c < 0x7f) {
    return c == U'"' || c == U'\\' ? std::string("\"\\") + char(c) + "\""
                                   : "\"" + utf8_of(c) + "\"";
  }
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string hex;
  for (char32_t v = c; v != 0 || hex.size() < 4; v >>= 4) hex.insert(hex.begin(), kHex[v & 0xf]);
  const bool printable = c >= 0xA0 && c != 0xAD && !(c >= 0x2000 && c <= 0x200F);
  return (printable ? "\"" + utf8_of(c) + "\" " : std::string()) + "U+" + hex;
}

// The alphabet in a message, as JSON writes a string: " abc…\"-()".
std::string shown_alphabet(std::string_view alphabet) {
  std::string text = "\"";
  for (const char c : alphabet) {
    if (c == '"' || c == '\\') text += '\\';
    text += c;
  }
  return text + "\"";
}

// A character in a note: itself, the space as the chips show it ("␣").
std::string in_note(const std::string& character) {
  return character == " " ? "\u2423" : character;
}

// "é → e, — → -" for the first few distinct (typed, read) pairs of one kind.
std::string examples(const std::vector<MappedCharacter>& mapped, CharacterMapping how,
                     std::size_t& count) {
  std::vector<std::pair<std::string, std::string>> seen;
  count = 0;
  for (const auto& m : mapped) {
    if (m.how != how) continue;
    ++count;
    const std::pair<std::string, std::string> pair{m.typed, m.read};
    if (std::find(seen.begin(), seen.end(), pair) == seen.end()) seen.push_back(pair);
  }
  std::string text;
  for (std::size_t i = 0; i < seen.size() && i < kNoteExamples; ++i) {
    if (i > 0) text += ", ";
    text += in_note(seen[i].first) + " \u2192 " + in_note(seen[i].second);
  }
  if (seen.size() > kNoteExamples) {
    text += " and " + std::to_string(seen.size() - kNoteExamples) + " more";
  }
  return text;
}

// One sentence for the page: "Read in the english model's alphabet: 2 capitals as lowercase;
// é → e, — → -; € → ␣ (not in the alphabet: marked)."
std::string note_of(const std::vector<MappedCharacter>& mapped, std::string_view owner) {
  if (mapped.empty()) return {};
  std::vector<std::string> parts;
  std::size_t count = 0;
  examples(mapped, CharacterMapping::Lowercase, count);
  if (count > 0) {
    parts.push_back(std::to_string(count) + (count == 1 ? " capital" : " capitals") +
                    " as lowercase");
  }
  const std::string similar = examples(mapped, CharacterMapping::Similar, count);
  if (count > 0) parts.push_back(similar);
  const std::string replaced = examples(mapped, CharacterMapping::Replaced, count);
  if (count > 0) parts.push_back(replaced + " (not in the alphabet: marked)");
  std::string note = "Read in " + std::string(owner) + "'s alphabet: ";
  for (std::size_t i = 0; i < parts.size(); ++i) note += (i > 0 ? "; " : "") + parts[i];
  return note + ".";
}

}  // namespace

std::span<const NamedKind<UnknownCharacters>> unknown_character_policies() {
  static constexpr NamedKind<UnknownCharacters> table[] = {{"error", UnknownCharacters::Error},
                                                           {"map", UnknownCharacters::Map}};
  return table;
}

UnknownCharacters parse_unknown_characters(std::string_view name) {
  return parse_named(unknown_character_policies(), name, "unknown-character policy");
}

std::span<const NamedKind<CharacterMapping>> character_mappings() {
  static constexpr NamedKind<CharacterMapping> table[] = {
      {"lowercase", CharacterMapping::Lowercase},
      {"similar", CharacterMapping::Similar},
      {"replaced", CharacterMapping::Replaced}};
  return table;
}

AlphabetText read_in_alphabet(std::string_view text, std::string_view alphabet,
                              std::string_view owner, UnknownCharacters unknown) {
  if (first_invalid_utf8(alphabet) != std::string_view::npos) {
    throw Error(std::string(owner) + "'s alphabet is not valid UTF-8");
  }
  const std::u32string letters = decode_utf8_replacing(alphabet);
  if (letters.empty()) throw Error(std::string(owner) + "'s alphabet is empty");
  const auto index_of = [&](char32_t c) -> std::int32_t {
    const std::size_t at = letters.find(c);
    return at == std::u32string::npos ? -1 : static_cast<std::int32_t>(at);
  };
  const char32_t substitute = index_of(U' ') >= 0   ? U' '
                              : index_of(U'?') >= 0 ? U'?'
                                                    : letters.front();

  if (unknown == UnknownCharacters::Error) {
    const std::size_t bad = first_invalid_utf8(text);
    if (bad != std::string_view::npos) {
      throw Error("invalid UTF-8 at byte " + std::to_string(bad) + ": " +
                  decode_utf8(text, bad).error);
    }
  }
  const std::u32string characters = decode_utf8_replacing(text);
  AlphabetText out;
  out.ids.reserve(characters.size());
  out.characters.reserve(characters.size());
  for (std::size_t i = 0; i < characters.size(); ++i) {
    const char32_t typed = characters[i];
    char32_t read = typed;
    std::int32_t id = index_of(typed);
    CharacterMapping how = CharacterMapping::Lowercase;
    if (id < 0 && unknown == UnknownCharacters::Error) {
      throw Error("character " + shown(typed) + " at position " + std::to_string(i) +
                  " is not in " + std::string(owner) + "'s alphabet " + shown_alphabet(alphabet));
    }
    if (id < 0) {
      read = lowercase(typed);
      id = read != typed ? index_of(read) : -1;
      if (id < 0) {
        how = CharacterMapping::Similar;
        read = look_alike(lowercase(typed));
        id = read != 0 ? index_of(read) : -1;
      }
      if (id < 0) {
        how = CharacterMapping::Replaced;
        read = substitute;
        id = index_of(read);
      }
      out.mapped.push_back({i, utf8_of(typed), utf8_of(read), how});
    }
    out.ids.push_back(id);
    out.characters.push_back(utf8_of(read));
  }
  out.note = note_of(out.mapped, owner);
  return out;
}

}  // namespace attn
