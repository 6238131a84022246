// GPT-2's byte-level BPE tokenizer: the pre-tokenizer regex (by hand, on code points), the
// byte-to-unicode alphabet of its vocabulary files, and the merges applied by rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attn {

// GPT-2's byte → character map (bytes 33–126, 161–172, 174–255 are themselves; the others are
// U+0100 onwards in byte order): a vocabulary or merges file holds tokens in these characters.
char32_t byte_to_unicode(std::uint8_t byte);

// The pieces of GPT-2's pre-tokenizer regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// over the decoded text, each re-encoded as UTF-8.
std::vector<std::string> gpt2_pre_tokenize(std::string_view bytes);

class BpeTokenizer {
 public:
  // vocab: one token per line in id order (line i is id i), in the byte-to-unicode alphabet
  // (a token with a character outside it, e.g. an added special token, is kept as its UTF-8);
  // merges: one "a b" pair per line, best first (a "#version" line and empty lines skipped).
  // Throws attn::Error naming a bad line (a merge of tokens not in the vocabulary, a
  // duplicate token, too many tokens).
  BpeTokenizer(std::string_view vocab, std::string_view merges);

  std::size_t vocab_size() const { return tokens_.size(); }
  // Ids of `text` (any bytes; invalid UTF-8 as decode_utf8_replacing).
  std::vector<std::int32_t> encode(std::string_view text) const;
  // A token's bytes (raw, not the byte-to-unicode form; may be part of a UTF-8 character).
  const std::string& token_bytes(std::int32_t id) const;
  // A token as readable text: its bytes when they are valid UTF-8, else each byte as <0xNN> (a
  // token holding part of a character). Throws for an id out of range.
  std::string token_text(std::int32_t id) const;
  // Throws attn::Error unless every id fits a model of model_vocab ids.
  void check_fits(std::size_t model_vocab) const;

 private:
  void bpe(const std::string& piece, std::vector<std::int32_t>& ids) const;

  std::vector<std::string> tokens_;                      // id → bytes
  std::unordered_map<std::string, std::int32_t> ids_;    // bytes → id
  std::unordered_map<std::string, std::int32_t> ranks_;  // pair key → merge rank
};

}  // namespace attn
