// Splits text into tokens (words and punctuation, or characters) and maps tokens to ids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attention/name_table.hpp"

namespace attn {

enum class TokenizerKind {
  Word,       // runs of letters/digits (and any non-ASCII UTF-8) are words; each punctuation
              // character is its own token; whitespace separates and is dropped.
              // An apostrophe between letters stays inside the word ("don't").
  Character,  // every Unicode code point (UTF-8 sequence) is a token, spaces included
};

// The tokenizer names in order ("word", "char"): the parser's table.
std::span<const NamedKind<TokenizerKind>> tokenizer_kinds();
TokenizerKind parse_tokenizer_kind(std::string_view name);  // throws naming every accepted name

struct Token {
  std::string text;
  std::size_t begin = 0;  // byte offsets into the input, [begin, end)
  std::size_t end = 0;
};

inline constexpr std::size_t kMaxTokens = std::size_t{1} << 20;  // per tokenize() call

// Throws attn::Error on invalid UTF-8 (naming the byte offset) or more than max_tokens tokens.
std::vector<Token> tokenize(std::string_view text, TokenizerKind kind,
                            std::size_t max_tokens = kMaxTokens);

// The row of the embedding table a token looks up: FNV-1a of the token's UTF-8 bytes, case
// folded for ASCII letters, modulo vocab_size. The same word always maps to the same row.
std::uint32_t token_id(std::string_view token, std::uint32_t vocab_size);

}  // namespace attn
