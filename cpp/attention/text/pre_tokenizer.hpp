// tokenizer.json's pre-tokenizers: ByteLevel, Split, Digits, Metaspace, in sequence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attention/text/regex.hpp"

namespace attn {

// GPT-2's byte → character map (bytes 33–126, 161–172, 174–255 are themselves; the others are
// U+0100 onwards in byte order): a byte-level vocabulary holds tokens in these characters.
char32_t byte_to_unicode(std::uint8_t byte);

// The pieces of GPT-2's pre-tokenizer regex (a JavaScript regex: \s is JS's, with U+FEFF)
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
std::vector<std::u32string> gpt2_split(std::u32string_view text);

struct PreTokenizerStep {
  enum Kind { kByteLevel, kSplit, kDigits, kMetaspace } kind = kByteLevel;
  // kByteLevel: a space put in front of a piece that does not start with one; GPT-2's regex.
  bool add_prefix_space = false;
  bool use_regex = true;
  // kSplit: a Regex (one of the known patterns) or else a literal string; the behaviour:
  // Isolated (each match and each stretch between matches is a piece), MergedWithPrevious (a
  // match ends the piece before it), or Removed with the pattern inverted (the matches are the
  // pieces; what lies between them is dropped).
  enum SplitBehavior { kIsolated, kMergedWithPrevious, kMatchesOnly };
  std::shared_ptr<const Regex> regex;
  std::u32string literal;
  SplitBehavior behavior = kIsolated;
  bool individual_digits = false;  // kDigits: each ASCII digit alone, else runs of them
  // kMetaspace: spaces become `replacement`, which is put in front always, in the first stretch
  // of the text only (before any added token), or never; split: a word starts at each one.
  enum Prepend { kAlways, kFirst, kNever };
  char32_t replacement = U'\u2581';
  Prepend prepend = kAlways;
  bool split = true;
};

// The steps in order, each applied to every piece of the one before, as @huggingface/tokenizers
// splits a stretch of text into words.
class PreTokenizer {
 public:
  PreTokenizer() = default;  // none: a stretch of text is one word
  explicit PreTokenizer(std::vector<PreTokenizerStep> steps) : steps_(std::move(steps)) {}

  // The words of one stretch of text; section is its index among the stretches the added tokens
  // cut the text into (Metaspace's "first").
  std::vector<std::u32string> operator()(std::u32string text, std::size_t section) const;

  // Whether a ByteLevel step maps the words into GPT-2's byte alphabet.
  bool byte_level() const;

 private:
  std::vector<PreTokenizerStep> steps_;
};

}  // namespace attn
