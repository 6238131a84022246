// Word and character tokenizers over validated UTF-8, and the FNV-1a token -> embedding row map.
#include "attention/text/tokenizer.hpp"

#include <utility>

#include "attention/error.hpp"
#include "attention/utf8.hpp"

namespace attn {
namespace {

constexpr char32_t kRightSingleQuote = 0x2019;  // ’, the typographic apostrophe

struct CodePoint {
  char32_t value = 0;
  std::size_t begin = 0;  // byte offsets, [begin, end)
  std::size_t end = 0;
};

[[noreturn]] void fail_utf8(std::size_t offset, const std::string& what) {
  throw Error("invalid UTF-8 at byte " + std::to_string(offset) + ": " + what);
}

// Decodes the code point starting at text[pos]; throws naming the offset on malformed UTF-8.
CodePoint decode_at(std::string_view text, std::size_t pos) {
  const Utf8Char c = decode_utf8(text, pos);
  if (c.length == 0) fail_utf8(pos, c.error);
  return {c.code_point, pos, pos + c.length};
}

enum class CharClass { Word, Space, Apostrophe, Symbol };

bool is_ascii_word_char(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool is_ascii_space(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

CharClass classify(char32_t c) {
  if (c == '\'' || c == kRightSingleQuote) return CharClass::Apostrophe;
  if (c >= 0x80 || is_ascii_word_char(c)) return CharClass::Word;
  if (is_ascii_space(c)) return CharClass::Space;
  return CharClass::Symbol;
}

// Collects tokens as byte ranges of the input, enforcing the token limit.
class TokenList {
 public:
  TokenList(std::string_view text, std::size_t max_tokens) : text_(text), max_(max_tokens) {}

  void add(std::size_t begin, std::size_t end) {
    if (tokens_.size() == max_) {
      throw Error("text has more than " + std::to_string(max_) + " tokens (the limit)");
    }
    tokens_.push_back(Token{std::string(text_.substr(begin, end - begin)), begin, end});
  }

  std::vector<Token> take() { return std::move(tokens_); }

 private:
  std::string_view text_;
  std::size_t max_;
  std::vector<Token> tokens_;
};

bool word_char_at(std::string_view text, std::size_t pos) {
  return pos < text.size() && classify(decode_at(text, pos).value) == CharClass::Word;
}

std::vector<Token> tokenize_words(std::string_view text, std::size_t max_tokens) {
  TokenList tokens(text, max_tokens);
  bool in_word = false;
  std::size_t word_begin = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const CodePoint cp = decode_at(text, pos);
    pos = cp.end;
    const CharClass kind = classify(cp.value);
    // In a word, the previous code point was a word character: keep "don't" together.
    if (kind == CharClass::Apostrophe && in_word && word_char_at(text, cp.end)) continue;
    if (kind == CharClass::Word) {
      if (!in_word) word_begin = cp.begin;
      in_word = true;
      continue;
    }
    if (in_word) tokens.add(word_begin, cp.begin);
    in_word = false;
    if (kind != CharClass::Space) tokens.add(cp.begin, cp.end);
  }
  if (in_word) tokens.add(word_begin, text.size());
  return tokens.take();
}

std::vector<Token> tokenize_characters(std::string_view text, std::size_t max_tokens) {
  TokenList tokens(text, max_tokens);
  for (std::size_t pos = 0; pos < text.size();) {
    const CodePoint cp = decode_at(text, pos);
    tokens.add(cp.begin, cp.end);
    pos = cp.end;
  }
  return tokens.take();
}

unsigned char fold_ascii_case(unsigned char byte) {
  return byte >= 'A' && byte <= 'Z' ? static_cast<unsigned char>(byte - 'A' + 'a') : byte;
}

}  // namespace

std::span<const NamedKind<TokenizerKind>> tokenizer_kinds() {
  static constexpr NamedKind<TokenizerKind> table[] = {{"word", TokenizerKind::Word},
                                                       {"char", TokenizerKind::Character}};
  return table;
}

TokenizerKind parse_tokenizer_kind(std::string_view name) {
  return parse_named(tokenizer_kinds(), name, "tokenizer");
}

std::vector<Token> tokenize(std::string_view text, TokenizerKind kind, std::size_t max_tokens) {
  switch (kind) {
    case TokenizerKind::Word:
      return tokenize_words(text, max_tokens);
    case TokenizerKind::Character:
      return tokenize_characters(text, max_tokens);
  }
  throw Error("tokenize: unknown tokenizer kind " + std::to_string(static_cast<int>(kind)));
}

std::uint32_t token_id(std::string_view token, std::uint32_t vocab_size) {
  if (vocab_size == 0) throw Error("token_id: vocab_size must be at least 1, got 0");
  constexpr std::uint32_t kOffsetBasis = 2166136261u;
  constexpr std::uint32_t kPrime = 16777619u;
  std::uint32_t hash = kOffsetBasis;
  for (const char c : token) {
    hash ^= fold_ascii_case(static_cast<unsigned char>(c));
    hash *= kPrime;
  }
  return hash % vocab_size;
}

}  // namespace attn
