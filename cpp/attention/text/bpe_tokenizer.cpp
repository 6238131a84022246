// GPT-2's byte-level BPE, see bpe_tokenizer.hpp.
#include "attention/text/bpe_tokenizer.hpp"

#include <limits>

#include "attention/error.hpp"
#include "attention/text/unicode_classes.hpp"
#include "attention/text/utf8.hpp"

namespace attn {

namespace {

constexpr std::size_t kMaxTokens = 1u << 20;
constexpr std::size_t kMaxTokenBytes = 1024;

// The inverse of byte_to_unicode: a vocabulary character's byte, or -1.
int unicode_to_byte(char32_t cp) {
  static const std::vector<int> inverse = [] {
    std::vector<int> table(512, -1);
    for (int b = 0; b < 256; ++b) table[byte_to_unicode(std::uint8_t(b))] = b;
    return table;
  }();
  return cp < inverse.size() ? inverse[cp] : -1;
}

// A vocabulary entry's bytes: each character through unicode_to_byte, or (any character
// outside the alphabet) the entry's own UTF-8.
std::string token_from_vocab(std::string_view entry) {
  std::string bytes;
  for (const char32_t cp : decode_utf8_replacing(entry)) {
    const int b = unicode_to_byte(cp);
    if (b < 0) return std::string(entry);
    bytes += char(b);
  }
  return bytes;
}

std::string pair_key(const std::string& a, const std::string& b) {
  std::string key;
  key.reserve(a.size() + b.size() + 2);
  key += char(a.size() & 0xFF);
  key += char(a.size() >> 8);
  return key + a + b;
}

template <class Each>
void for_each_line(std::string_view text, Each each) {
  std::size_t line = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view row = text.substr(0, end);
    if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
    each(row, line++);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

bool is_other(char32_t cp) {
  return !is_js_space(cp) && !is_letter(cp) && !is_number(cp);
}

}  // namespace

char32_t byte_to_unicode(std::uint8_t byte) {
  const bool printable = (byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) || byte >= 174;
  if (printable) return byte;
  // the others, in byte order, from U+0100
  int rank = 0;
  for (int b = 0; b < byte; ++b) {
    const bool p = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    rank += !p;
  }
  return char32_t(256 + rank);
}

std::vector<std::string> gpt2_pre_tokenize(std::string_view bytes) {
  const std::u32string text = decode_utf8_replacing(bytes);
  const std::size_t size = text.size();
  std::vector<std::string> pieces;
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
    std::string piece;
    for (std::size_t i = pos; i < end; ++i) append_utf8(piece, text[i]);
    pieces.push_back(std::move(piece));
    pos = end;
  }
  return pieces;
}

BpeTokenizer::BpeTokenizer(std::string_view vocab, std::string_view merges) {
  for_each_line(vocab, [&](std::string_view row, std::size_t line) {
    if (tokens_.size() == kMaxTokens) {
      throw Error("the tokenizer has more than " + std::to_string(kMaxTokens) + " tokens");
    }
    if (row.empty() || row.size() > kMaxTokenBytes) {
      throw Error("the tokenizer's token " + std::to_string(line) +
                  (row.empty() ? " is empty" : " is longer than 1024 bytes"));
    }
    std::string bytes = token_from_vocab(row);
    if (!ids_.emplace(bytes, std::int32_t(tokens_.size())).second) {
      throw Error("the tokenizer's token " + std::to_string(line) + " '" +
                  std::string(row.substr(0, 40)) + "' appears twice");
    }
    tokens_.push_back(std::move(bytes));
  });
  if (tokens_.empty()) throw Error("the tokenizer's vocabulary is empty");
  for (std::size_t b = 0; b < 256; ++b) {
    if (!ids_.count(std::string(1, char(b)))) {
      std::string shown;
      append_utf8(shown, byte_to_unicode(std::uint8_t(b)));
      throw Error("the tokenizer's vocabulary has no token for byte " + std::to_string(b) + " ('" +
                  shown + "'): a byte-level BPE vocabulary (GPT-2's) starts with all 256");
    }
  }
  std::int32_t rank = 0;
  for_each_line(merges, [&](std::string_view row, std::size_t line) {
    if (row.empty() || row.starts_with("#version")) return;
    const std::size_t space = row.find(' ');
    if (space == std::string_view::npos || space == 0 || space + 1 == row.size() ||
        row.find(' ', space + 1) != std::string_view::npos) {
      throw Error("the tokenizer's merge line " + std::to_string(line + 1) + " '" +
                  std::string(row.substr(0, 40)) + "' is not two tokens separated by a space");
    }
    const std::string a = token_from_vocab(row.substr(0, space));
    const std::string b = token_from_vocab(row.substr(space + 1));
    if (!ids_.count(a) || !ids_.count(b) || !ids_.count(a + b)) {
      throw Error("the tokenizer's merge line " + std::to_string(line + 1) + " '" +
                  std::string(row.substr(0, 40)) +
                  "' joins tokens that are not in the vocabulary (do the merges match it?)");
    }
    ranks_.emplace(pair_key(a, b), rank++);
  });
}

void BpeTokenizer::bpe(const std::string& piece, std::vector<std::int32_t>& ids) const {
  std::vector<std::string> symbols;
  for (const char byte : piece) symbols.emplace_back(1, byte);
  while (symbols.size() > 1) {
    std::int32_t best = std::numeric_limits<std::int32_t>::max();
    std::size_t at = 0;
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
      const auto found = ranks_.find(pair_key(symbols[i], symbols[i + 1]));
      if (found != ranks_.end() && found->second < best) {
        best = found->second;
        at = i;
      }
    }
    if (best == std::numeric_limits<std::int32_t>::max()) break;
    // merge every occurrence of the best pair, left to right
    const std::string a = symbols[at], b = symbols[at + 1];
    std::vector<std::string> merged;
    for (std::size_t i = 0; i < symbols.size();) {
      if (i + 1 < symbols.size() && symbols[i] == a && symbols[i + 1] == b) {
        merged.push_back(a + b);
        i += 2;
      } else {
        merged.push_back(std::move(symbols[i]));
        ++i;
      }
    }
    symbols = std::move(merged);
  }
  for (const auto& symbol : symbols) ids.push_back(ids_.at(symbol));  // every merge is in ids_
}

std::vector<std::int32_t> BpeTokenizer::encode(std::string_view text) const {
  std::vector<std::int32_t> ids;
  for (const auto& piece : gpt2_pre_tokenize(text)) bpe(piece, ids);
  return ids;
}

const std::string& BpeTokenizer::token_bytes(std::int32_t id) const {
  if (id < 0 || std::size_t(id) >= tokens_.size()) {
    throw Error("token id " + std::to_string(id) + " is out of range: the tokenizer has ids 0 to " +
                std::to_string(tokens_.size() - 1));
  }
  return tokens_[std::size_t(id)];
}

std::string BpeTokenizer::token_text(std::int32_t id) const {
  const std::string& bytes = token_bytes(id);
  if (first_invalid_utf8(bytes) == std::string_view::npos) return bytes;
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string text;
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    text += "<0x";
    text += kHex[byte >> 4];
    text += kHex[byte & 15];
    text += '>';
  }
  return text;
}

void BpeTokenizer::check_fits(std::size_t model_vocab) const {
  if (tokens_.size() > model_vocab) {
    throw Error("the tokenizer has " + std::to_string(tokens_.size()) +
                " tokens but the model's vocabulary has " + std::to_string(model_vocab) +
                " (config.json's vocab_size): they do not belong together");
  }
}

}  // namespace attn
