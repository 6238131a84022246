// tokenizer.json's pre-tokenizers, see pre_tokenizer.hpp.
#include "attention/text/pre_tokenizer.hpp"

#include <algorithm>
#include <utility>

#include "attention/text/unicode_classes.hpp"
#include "attention/utf8.hpp"

namespace attn {

namespace {

bool is_other(char32_t cp) {
  return !is_js_space(cp) && !is_letter(cp) && !is_number(cp);
}

bool is_ascii_digit(char32_t cp) {
  return cp >= U'0' && cp <= U'9';
}

std::u32string to_byte_alphabet(std::u32string_view piece) {
  std::string bytes;
  for (const char32_t cp : piece) append_utf8(bytes, cp);
  std::u32string out;
  out.reserve(bytes.size());
  for (const char byte : bytes) out += byte_to_unicode(static_cast<std::uint8_t>(byte));
  return out;
}

// The [begin, end) spans of a literal string in `text`, left to right, not overlapping.
std::vector<std::pair<std::size_t, std::size_t>> literal_spans(std::u32string_view text,
                                                               std::u32string_view literal) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  for (std::size_t at = text.find(literal); at != std::u32string_view::npos;
       at = text.find(literal, at + literal.size())) {
    spans.emplace_back(at, at + literal.size());
  }
  return spans;
}

// A piece cut at the matches `spans` as `behavior` says; empty pieces are dropped.
void split_at(std::u32string_view piece,
              const std::vector<std::pair<std::size_t, std::size_t>>& spans,
              PreTokenizerStep::SplitBehavior behavior, std::vector<std::u32string>& out) {
  std::size_t prev = 0;
  for (const auto& [start, end] : spans) {
    switch (behavior) {
      case PreTokenizerStep::kIsolated:
        if (start > prev) out.emplace_back(piece.substr(prev, start - prev));
        if (end > start) out.emplace_back(piece.substr(start, end - start));
        break;
      case PreTokenizerStep::kMergedWithPrevious:
        if (end > prev) out.emplace_back(piece.substr(prev, end - prev));
        break;
      case PreTokenizerStep::kMatchesOnly:
        if (end > start) out.emplace_back(piece.substr(start, end - start));
        break;
    }
    prev = std::max(prev, end);
  }
  if (behavior != PreTokenizerStep::kMatchesOnly && prev < piece.size())
    out.emplace_back(piece.substr(prev));
}

void apply(const PreTokenizerStep& step, std::u32string piece, std::size_t section,
           std::vector<std::u32string>& out) {
  switch (step.kind) {
    case PreTokenizerStep::kByteLevel: {
      if (step.add_prefix_space && (piece.empty() || piece[0] != U' ')) piece.insert(0, 1, U' ');
      if (!step.use_regex) {
        out.push_back(to_byte_alphabet(piece));
        return;
      }
      for (const auto& word : gpt2_split(piece)) out.push_back(to_byte_alphabet(word));
      return;
    }
    case PreTokenizerStep::kSplit:
      split_at(piece, step.regex ? step.regex->find_all(piece) : literal_spans(piece, step.literal),
               step.behavior, out);
      return;
    case PreTokenizerStep::kDigits: {
      // JavaScript's /[^\d]+|\d/g (individual) or /[^\d]+|\d+/g: \d is ASCII's 0-9 only
      std::size_t pos = 0;
      while (pos < piece.size()) {
        std::size_t end = pos + 1;
        const bool digit = is_ascii_digit(piece[pos]);
        if (!digit || !step.individual_digits) {
          while (end < piece.size() && is_ascii_digit(piece[end]) == digit) ++end;
        }
        out.push_back(piece.substr(pos, end - pos));
        pos = end;
      }
      return;
    }
    case PreTokenizerStep::kMetaspace: {
      for (char32_t& cp : piece) {
        if (cp == U' ') cp = step.replacement;
      }
      const bool prepend = step.prepend == PreTokenizerStep::kAlways ||
                           (step.prepend == PreTokenizerStep::kFirst && section == 0);
      if (prepend && (piece.empty() || piece[0] != step.replacement)) {
        piece.insert(0, 1, step.replacement);
      }
      if (!step.split) {
        out.push_back(std::move(piece));
        return;
      }
      // each replacement starts a word (the Hub's "MergedWithNext")
      std::size_t start = 0;
      for (std::size_t i = 1; i <= piece.size(); ++i) {
        if (i == piece.size() || piece[i] == step.replacement) {
          out.push_back(piece.substr(start, i - start));
          start = i;
        }
      }
      return;
    }
  }
}

}  // namespace

char32_t byte_to_unicode(std::uint8_t byte) {
  const auto printable = [](int b) {
    return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
  };
  if (printable(byte)) return byte;
  int rank = 0;  // the others, in byte order, from U+0100
  for (int b = 0; b < byte; ++b) rank += !printable(b);
  return char32_t(256 + rank);
}

std::vector<std::u32string> gpt2_split(std::u32string_view text) {
  const std::size_t size = text.size();
  std::vector<std::u32string> pieces;
  std::size_t pos = 0;
  const auto run = [&](std::size_t from, bool (*in)(char32_t)) {
    while (from < size && in(text[from])) ++from;
    return from;
  };
  while (pos < size) {
    std::size_t end = pos;
    const char32_t c = text[pos];
    const char32_t next = pos + 1 < size ? text[pos + 1] : 0;
    const char32_t after = pos + 2 < size ? text[pos + 2] : 0;
    if (c == U'\'' && (next == U's' || next == U't' || next == U'm' || next == U'd')) {
      end = pos + 2;
    } else if (c == U'\'' && ((next == U'r' && after == U'e') || (next == U'v' && after == U'e') ||
                              (next == U'l' && after == U'l'))) {
      end = pos + 3;
    } else {
      const std::size_t start = c == U' ' && pos + 1 < size ? pos + 1 : pos;
      const char32_t first = text[start];
      if (is_letter(first)) {
        end = run(start, is_letter);
      } else if (is_number(first)) {
        end = run(start, is_number);
      } else if (is_other(first)) {
        end = run(start, is_other);
      } else {  // whitespace: \s+(?!\S) gives back the last one before a non-space, else \s+
        const std::size_t stop = run(pos, is_js_space);
        end = stop == size || stop - pos == 1 ? stop : stop - 1;
      }
    }
    pieces.emplace_back(text.substr(pos, end - pos));
    pos = end;
  }
  return pieces;
}

std::vector<std::u32string> PreTokenizer::operator()(std::u32string text,
                                                     std::size_t section) const {
  std::vector<std::u32string> pieces;
  pieces.push_back(std::move(text));
  for (const PreTokenizerStep& step : steps_) {
    std::vector<std::u32string> next;
    next.reserve(pieces.size());
    for (auto& piece : pieces) apply(step, std::move(piece), section, next);
    pieces = std::move(next);
  }
  return pieces;
}

bool PreTokenizer::byte_level() const {
  for (const PreTokenizerStep& step : steps_) {
    if (step.kind == PreTokenizerStep::kByteLevel) return true;
  }
  return false;
}

}  // namespace attn
