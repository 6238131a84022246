// A small backtracking regex matcher over code points, for tokenizer.json's Split patterns.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn {

// Oniguruma's \s, which the Hub's JS tokenizers rewrite to \p{White_Space}: JavaScript's \s
// without U+FEFF, with U+0085.
bool is_white_space(char32_t cp);

// Supported: literals; the escapes \r \n \t \f \v, \s \S, \p{L} \p{N} \P{L} \P{N} and an escaped
// punctuation character; classes [...] and [^...] of these and ranges a-z; groups (...), (?:...),
// (?i:...) (ASCII case folding, as the reference does), lookaheads (?=...) and (?!...);
// alternation |; greedy ?, *, +, {n}, {n,}, {n,m} on a single character or class. Alternatives are
// tried left to right and quantifiers backtrack, as in Oniguruma and JavaScript.
class Regex {
 public:
  // Throws attn::Error naming the first construct it does not support and where it is.
  explicit Regex(std::string_view pattern);

  // The end of the match starting at text[pos], or npos if none starts there.
  std::size_t match_at(std::u32string_view text, std::size_t pos) const;

  // The matches as [begin, end) spans, left to right, as JavaScript's matchAll finds them: the
  // next search starts where a match ends, or one character on after an empty match.
  std::vector<std::pair<std::size_t, std::size_t>> find_all(std::u32string_view text) const;

  // Split with the behaviour "Isolated": each non-empty match and each stretch between matches,
  // in order.
  std::vector<std::u32string> split_isolated(std::u32string_view text) const;

  static constexpr std::size_t npos = std::u32string_view::npos;

 private:
  struct ClassItem {
    enum Kind { kRange, kLetter, kNumber, kSpace } kind = kRange;
    bool negated = false;  // \P{..}, \S
    char32_t first = 0, last = 0;
  };
  struct CharSet {
    std::vector<ClassItem> items;
    bool negated = false;     // [^...]
    bool fold_ascii = false;  // inside (?i:...)
    bool test(char32_t cp) const;
    bool test_positive(char32_t cp) const;
  };
  struct Node {
    enum Kind { kSet, kAlt, kLook, kAccept } kind = kAccept;
    CharSet set;  // kSet
    std::size_t min = 1, max = 1;
    std::vector<int> branches;  // kAlt
    int body = -1;              // kLook
    bool negative = false;      // kLook
    int next = -1;              // kSet, kLook
  };
  struct Term;
  class Parser;

  std::size_t run(int node, std::u32string_view text, std::size_t pos) const;

  std::vector<Node> nodes_;
  int start_ = -1;
};

}  // namespace attn
