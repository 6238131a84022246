// A checkpoint's BPE tokenizer: tokenizer.json's pipeline, from GPT-2's files or tokenizer.json.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "attention/text/added_tokens.hpp"
#include "attention/text/normalizer.hpp"
#include "attention/text/pre_tokenizer.hpp"

namespace attn {

// The pieces of GPT-2's pre-tokenizer regex (gpt2_split) over the decoded text, each re-encoded
// as UTF-8.
std::vector<std::string> gpt2_pre_tokenize(std::string_view bytes);

// What a BpeTokenizer is made of, as tokenizer.json describes it.
struct BpeSpec {
  bool from_json = true;  // how messages name the file: "tokenizer.json's …" or "the tokenizer's …"
  bool byte_tokens_required = false;  // GPT-2's files: the 256 byte tokens must all be there
  std::vector<std::pair<std::string, std::int32_t>> vocab;  // tokens as the file writes them
  std::vector<std::pair<std::string, std::string>> merges;  // best first
  std::vector<std::size_t> merge_lines;                     // merges.txt's line of each (messages)
  std::optional<std::string> unk_token;
  bool byte_fallback = false;  // a character not in the vocabulary as its bytes' <0xNN> tokens
  bool fuse_unk = false;       // unknown tokens in a row as one
  bool ignore_merges = false;  // a word in the vocabulary is one token
  std::vector<AddedToken> added;
  std::vector<NormalizerStep> normalizer;
  std::vector<PreTokenizerStep> pre_tokenizer;
  // The post-processor's special tokens before and after the text (by content), e.g. a BOS.
  std::vector<std::string> prefix, suffix;
};

// GPT-2's two files as a spec: vocab.json's tokens (in the byte-to-unicode alphabet, with their
// ids) and merges.txt's text (one "a b" pair per line, best first; a "#version" line and empty
// lines skipped), pre-tokenized as GPT-2 does. Throws attn::Error naming a bad merge line; the
// tokenizer's build names the rest (an empty or duplicate token, a missing id or byte token, a
// merge of tokens not in the vocabulary).
BpeSpec gpt2_files_spec(std::vector<std::pair<std::string, std::int32_t>> vocab,
                        std::string_view merges);

// The pipeline of Hugging Face's tokenizer.json: added tokens, normalizer, pre-tokenizer, BPE
// merges by rank (ignore_merges, byte fallback, the unknown token), the post-processor's special
// tokens. Built from GPT-2's vocabulary and merges files, or from tokenizer.json
// (tokenizer_json.hpp).
class BpeTokenizer {
 public:
  // GPT-2's files. vocab: one token per line in id order (line i is id i), in the byte-to-unicode
  // alphabet (a token with a character outside it, e.g. an added special token, is kept as its
  // UTF-8); merges: one "a b" pair per line, best first (a "#version" line and empty lines
  // skipped). Throws attn::Error naming a bad line (a merge of tokens not in the vocabulary, a
  // duplicate token, too many tokens).
  BpeTokenizer(std::string_view vocab, std::string_view merges);

  // Throws attn::Error for a spec that does not hang together (ids, merges, the unknown token);
  // nfc: the Unicode normalization a normalizer NFC needs (see normalizer.hpp).
  BpeTokenizer(BpeSpec spec, UnicodeNormalize nfc);

  std::size_t vocab_size() const { return bytes_.size(); }

  // Ids of `text` (any bytes; invalid UTF-8 as decode_utf8_replacing), with the post-processor's
  // special tokens (e.g. a BOS) when add_special_tokens: the ids the model is given.
  std::vector<std::int32_t> encode(std::string_view text, bool add_special_tokens = true) const;

  // A token's bytes (its text, not the vocabulary's form: "Ġa" is " a", "▁a" is " a", "<0x0A>" is
  // a newline; may be part of a UTF-8 character).
  const std::string& token_bytes(std::int32_t id) const;
  // A token as readable text: its bytes when they are valid UTF-8, else each byte as <0xNN> (a
  // token holding part of a character). Throws for an id out of range.
  std::string token_text(std::int32_t id) const;
  // token_text for an id the model may output: an id of the model's vocabulary past the
  // tokenizer's (the padding rows of an embedding rounded up: Pythia's 50 304 rows against its
  // tokenizer's 50 277 ids) is "[id N: no token]"; an id past both still throws.
  std::string output_text(std::int32_t id) const;
  // Throws attn::Error unless the tokenizer fits a model of model_vocab ids: every vocabulary
  // token and every post-processor token within them. Added tokens beyond them are kept (Gemma
  // 3's tokenizer has <image_soft_token> at 262 144, one past its text model's 262 144 rows), and
  // from then on encode refuses text that holds one, naming it.
  void check_fits(std::size_t model_vocab);

  // The ids put before (e.g. a BOS) and after the text's when add_special_tokens.
  const std::vector<std::int32_t>& special_prefix() const { return prefix_; }
  const std::vector<std::int32_t>& special_suffix() const { return suffix_; }
  // Whether encode calls the Unicode normalization it was given (a normalizer NFC).
  bool needs_nfc() const { return normalizer_.needs_nfc(); }

 private:
  struct Merge {
    std::int32_t rank = 0;
    std::int32_t id = 0;  // the merged token's
  };
  void build(BpeSpec spec, UnicodeNormalize nfc);
  std::int32_t final_id(const std::string& token) const;
  void encode_words(const std::vector<std::u32string>& words, std::vector<std::int32_t>& ids) const;
  void bpe(std::u32string_view word, std::vector<std::int32_t>& ids, bool& last_unknown) const;

  std::unordered_map<std::string, std::int32_t> vocab_;  // the vocabulary's tokens as written
  std::unordered_map<char32_t, std::int32_t> char_ids_;  // its one-character tokens
  std::unordered_map<std::uint64_t, Merge> merges_;      // (id a, id b) → rank, merged id
  std::vector<std::int32_t>
      remap_;  // vocabulary id → the id given (an added token's, if same text)
  std::vector<std::string> bytes_;            // id → bytes
  std::array<std::int32_t, 256> byte_ids_{};  // <0xNN> tokens for byte fallback, or -1
  std::optional<std::int32_t> unk_;
  bool byte_fallback_ = false;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;
  AddedVocabulary added_;
  Normalizer normalizer_;
  PreTokenizer pre_tokenizer_;
  std::vector<std::int32_t> prefix_, suffix_;
  std::int32_t largest_vocabulary_id_ = -1;  // the largest id that is not an added token's
  std::size_t model_vocab_ = std::numeric_limits<std::size_t>::max();  // check_fits: ids < it
};

}  // namespace attn
