// A checkpoint's BPE tokenizer, see bpe_tokenizer.hpp.
#include "attention/text/bpe_tokenizer.hpp"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_set>

#include "attention/error.hpp"
#include "attention/utf8.hpp"

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

// A byte-level vocabulary entry's bytes: each character through unicode_to_byte, or (any
// character outside the alphabet) the entry's own UTF-8.
std::string bytes_of_byte_level(std::string_view entry) {
  std::string bytes;
  for (const char32_t cp : decode_utf8_replacing(entry)) {
    const int b = unicode_to_byte(cp);
    if (b < 0) return std::string(entry);
    bytes += char(b);
  }
  return bytes;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// A SentencePiece-style entry's bytes: <0xNN> (with byte fallback) is byte NN; `space` is a space.
std::string bytes_of_text(std::string_view entry, char32_t space, bool byte_fallback) {
  if (byte_fallback && entry.size() == 6 && entry.starts_with("<0x") && entry.back() == '>' &&
      hex_digit(entry[3]) >= 0 && hex_digit(entry[4]) >= 0) {
    return std::string(1, char(hex_digit(entry[3]) * 16 + hex_digit(entry[4])));
  }
  if (space == 0) return std::string(entry);
  std::string bytes;
  for (const char32_t cp : decode_utf8_replacing(entry))
    append_utf8(bytes, cp == space ? U' ' : cp);
  return bytes;
}

std::string utf8_of(std::u32string_view text) {
  std::string out;
  for (const char32_t cp : text) append_utf8(out, cp);
  return out;
}

std::uint64_t pair_key(std::int32_t a, std::int32_t b) {
  return (std::uint64_t(std::uint32_t(a)) << 32) | std::uint32_t(b);
}

std::string shown(std::string_view token) {
  return "'" + std::string(token.substr(0, 40)) + (token.size() > 40 ? "…'" : "'");
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

}  // namespace

std::vector<std::string> gpt2_pre_tokenize(std::string_view bytes) {
  std::vector<std::string> pieces;
  for (const auto& piece : gpt2_split(decode_utf8_replacing(bytes)))
    pieces.push_back(utf8_of(piece));
  return pieces;
}

BpeSpec gpt2_files_spec(std::vector<std::pair<std::string, std::int32_t>> vocab,
                        std::string_view merges) {
  BpeSpec spec;
  spec.from_json = false;
  spec.byte_tokens_required = true;
  spec.vocab = std::move(vocab);
  for_each_line(merges, [&](std::string_view row, std::size_t line) {
    if (row.empty() || row.starts_with("#version")) return;
    const std::size_t space = row.find(' ');
    if (space == std::string_view::npos || space == 0 || space + 1 == row.size() ||
        row.find(' ', space + 1) != std::string_view::npos) {
      throw Error("the tokenizer's merge line " + std::to_string(line + 1) + " " + shown(row) +
                  " is not two tokens separated by a space");
    }
    spec.merges.emplace_back(std::string(row.substr(0, space)), std::string(row.substr(space + 1)));
    spec.merge_lines.push_back(line + 1);
  });
  PreTokenizerStep byte_level;  // GPT-2's: ByteLevel with its regex, no prefix space
  spec.pre_tokenizer.push_back(byte_level);
  return spec;
}

BpeTokenizer::BpeTokenizer(std::string_view vocab, std::string_view merges) {
  std::vector<std::pair<std::string, std::int32_t>> tokens;
  std::unordered_set<std::string_view> seen;
  for_each_line(vocab, [&](std::string_view row, std::size_t line) {
    if (tokens.size() == kMaxTokens) {
      throw Error("the tokenizer has more than " + std::to_string(kMaxTokens) + " tokens");
    }
    if (!row.empty() && !seen.insert(row).second) {
      throw Error("the tokenizer's token " + std::to_string(line) + " " + shown(row) +
                  " appears twice");
    }
    tokens.emplace_back(std::string(row), std::int32_t(line));
  });
  build(gpt2_files_spec(std::move(tokens), merges), {});
}

BpeTokenizer::BpeTokenizer(BpeSpec spec, UnicodeNormalize nfc) {
  build(std::move(spec), std::move(nfc));
}

std::int32_t BpeTokenizer::final_id(const std::string& token) const {
  if (const AddedToken* added = added_.find(decode_utf8_replacing(token))) return added->id;
  const auto found = vocab_.find(token);
  return found == vocab_.end() ? -1 : found->second;
}

void BpeTokenizer::build(BpeSpec spec, UnicodeNormalize nfc) {
  const std::string file = spec.from_json ? "tokenizer.json's" : "the tokenizer's";
  if (spec.vocab.size() + spec.added.size() > kMaxTokens) {
    throw Error(file + " vocabulary has more than " + std::to_string(kMaxTokens) + " tokens");
  }
  // ids: every one from 0 to the largest, each a vocabulary token or an added token (or both)
  std::vector<const std::string*> by_id;
  const auto place = [&](std::int32_t id) -> const std::string*& {
    if (id < 0 || std::size_t(id) >= kMaxTokens) {
      throw Error(file + " token id " + std::to_string(id) + " is out of range (0 to " +
                  std::to_string(kMaxTokens - 1) + ")");
    }
    if (by_id.size() <= std::size_t(id)) by_id.resize(std::size_t(id) + 1, nullptr);
    return by_id[std::size_t(id)];
  };
  vocab_.reserve(spec.vocab.size());
  for (const auto& [token, id] : spec.vocab) {
    if (token.empty() || token.size() > kMaxTokenBytes) {
      throw Error(file + " token " + std::to_string(id) +
                  (token.empty() ? " is empty" : " is longer than 1024 bytes"));
    }
    if (!vocab_.emplace(token, id).second) {
      throw Error(file + " vocab has the token " + shown(token) + " twice");
    }
    const std::string*& slot = place(id);
    if (slot)
      throw Error(file + " vocab gives id " + std::to_string(id) + " to both " + shown(*slot) +
                  " and " + shown(token));
    slot = &token;
  }
  std::vector<const AddedToken*> added_by_id;
  for (const AddedToken& token : spec.added) {
    if (token.content.empty() || token.content.size() > kMaxTokenBytes) {
      throw Error(file + " added token " + std::to_string(token.id) +
                  (token.content.empty() ? " is empty" : " is longer than 1024 bytes"));
    }
    const std::string*& slot = place(token.id);
    if (!slot) slot = &token.content;
    if (added_by_id.size() <= std::size_t(token.id))
      added_by_id.resize(std::size_t(token.id) + 1, nullptr);
    const AddedToken*& other = added_by_id[std::size_t(token.id)];
    if (other && other->content != token.content) {
      throw Error(file + " added tokens give id " + std::to_string(token.id) + " to both " +
                  shown(other->content) + " and " + shown(token.content));
    }
    other = &token;
  }
  if (by_id.empty()) throw Error(file + " vocabulary is empty");
  for (std::size_t id = 0; id < by_id.size(); ++id) {
    if (!by_id[id]) throw Error("the tokenizer's vocab has no token with id " + std::to_string(id));
  }
  for (std::size_t b = 0; spec.byte_tokens_required && b < 256; ++b) {
    std::string character;
    append_utf8(character, byte_to_unicode(std::uint8_t(b)));
    if (!vocab_.count(character)) {
      throw Error("the tokenizer's vocabulary has no token for byte " + std::to_string(b) + " ('" +
                  character + "'): a byte-level BPE vocabulary (GPT-2's) starts with all 256");
    }
  }

  // SentencePiece's space in the vocabulary: Metaspace's replacement, or what a normalizer
  // Replace puts for " " (Llama 2's "▁")
  char32_t space = 0;
  for (const PreTokenizerStep& step : spec.pre_tokenizer) {
    if (step.kind == PreTokenizerStep::kMetaspace && !space) space = step.replacement;
  }
  for (const NormalizerStep& step : spec.normalizer) {
    if (!space && step.kind == NormalizerStep::kReplace && step.text == U" " &&
        step.replacement.size() == 1) {
      space = step.replacement[0];
    }
  }
  normalizer_ = Normalizer(std::move(spec.normalizer), std::move(nfc));
  added_ = AddedVocabulary(spec.added, normalizer_);
  pre_tokenizer_ = PreTokenizer(std::move(spec.pre_tokenizer));
  byte_fallback_ = spec.byte_fallback;
  fuse_unk_ = spec.fuse_unk;
  ignore_merges_ = spec.ignore_merges;

  for (const auto& [token, id] : vocab_) {
    const std::u32string text = decode_utf8_replacing(token);
    if (text.size() == 1) char_ids_.emplace(text[0], id);
  }
  merges_.reserve(spec.merges.size());
  for (std::size_t rank = 0; rank < spec.merges.size(); ++rank) {
    const auto& [a, b] = spec.merges[rank];
    const auto first = vocab_.find(a);
    const auto second = vocab_.find(b);
    const auto merged = vocab_.find(a + b);
    if (first == vocab_.end() || second == vocab_.end() || merged == vocab_.end()) {
      const std::string which =
          spec.merge_lines.empty()
              ? "tokenizer.json's merges[" + std::to_string(rank) + "]"
              : "the tokenizer's merge line " + std::to_string(spec.merge_lines[rank]);
      throw Error(which + " " + shown(a + " " + b) +
                  " joins tokens that are not in the vocabulary (do the merges match it?)");
    }
    // a pair listed twice keeps its later rank, as both of Hugging Face's tokenizers do
    merges_.insert_or_assign(pair_key(first->second, second->second),
                             Merge{std::int32_t(rank), merged->second});
  }

  // The id each vocabulary token is given (an added token with the same text takes its place),
  // and each id's bytes: an added token is its own text; a vocabulary token is read in its
  // alphabet (GPT-2's bytes, or SentencePiece's ▁ for a space and <0xNN> for a byte).
  remap_.assign(by_id.size(), 0);
  bytes_.assign(by_id.size(), {});
  const bool byte_level = pre_tokenizer_.byte_level();
  for (const auto& [token, id] : vocab_) {
    remap_[std::size_t(id)] = final_id(token);
    bytes_[std::size_t(id)] =
        byte_level ? bytes_of_byte_level(token) : bytes_of_text(token, space, byte_fallback_);
  }
  for (std::size_t id = 0; id < added_by_id.size(); ++id) {
    if (added_by_id[id]) bytes_[id] = added_by_id[id]->content;
  }
  for (std::size_t id = 0; id < by_id.size(); ++id) {
    if (id >= added_by_id.size() || !added_by_id[id]) largest_vocabulary_id_ = std::int32_t(id);
  }

  // As the reference: a token is known if it is in the vocabulary or an added token's content.
  const auto known = [&](const std::string& token) -> std::int32_t {
    if (vocab_.count(token) || added_.find_content(decode_utf8_replacing(token)))
      return final_id(token);
    return -1;
  };
  byte_ids_.fill(-1);
  if (byte_fallback_) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) {
      byte_ids_[std::size_t(b)] = known(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">");
    }
  }
  if (spec.unk_token) {
    const std::int32_t id = known(*spec.unk_token);
    if (id < 0)
      throw Error(file + " unk_token " + shown(*spec.unk_token) +
                  " is not a token of the vocabulary");
    unk_ = id;
  }
  const auto special = [&](const std::vector<std::string>& contents,
                           std::vector<std::int32_t>& ids) {
    for (const std::string& content : contents) {
      const std::int32_t id = final_id(content);
      if (id < 0) {
        throw Error(file + " post_processor adds " + shown(content) +
                    ", which is not a token of the vocabulary");
      }
      ids.push_back(id);
    }
  };
  special(spec.prefix, prefix_);
  special(spec.suffix, suffix_);
}

void BpeTokenizer::bpe(std::u32string_view word, std::vector<std::int32_t>& ids,
                       bool& last_unknown) const {
  if (word.empty()) return;
  const auto push = [&](std::int32_t id) {
    ids.push_back(id);
    last_unknown = false;
  };
  if (ignore_merges_) {
    const std::string text = utf8_of(word);
    if (const auto found = vocab_.find(text); found != vocab_.end())
      return push(remap_[std::size_t(found->second)]);
    if (const AddedToken* added = added_.find_content(word)) return push(added->id);
  }
  struct Symbol {
    std::int32_t id;  // a vocabulary token's (merges), or -1
    std::int32_t
        fixed;  // with id -1: an added token's id, or -1 for a character not in the vocabulary
    char32_t cp;
    std::int32_t prev, next;
    bool alive;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  for (std::size_t i = 0; i < word.size(); ++i) {
    Symbol symbol{
        -1, -1, word[i], std::int32_t(i) - 1, i + 1 < word.size() ? std::int32_t(i + 1) : -1, true};
    if (const auto found = char_ids_.find(word[i]); found != char_ids_.end()) {
      symbol.id = found->second;
    } else if (const AddedToken* added = added_.find_content(word.substr(i, 1))) {
      symbol.fixed = added->id;
    }
    symbols.push_back(symbol);
  }
  // The best-ranked pair first, the leftmost among equals (the reference's priority queue).
  struct Candidate {
    std::int32_t rank, pos;
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : pos > other.pos;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  const auto merge_of = [&](std::int32_t left) -> const Merge* {
    if (left < 0) return nullptr;
    const Symbol& a = symbols[std::size_t(left)];
    if (a.next < 0 || a.id < 0 || symbols[std::size_t(a.next)].id < 0) return nullptr;
    const auto found = merges_.find(pair_key(a.id, symbols[std::size_t(a.next)].id));
    return found == merges_.end() ? nullptr : &found->second;
  };
  const auto offer = [&](std::int32_t left) {
    if (const Merge* merge = merge_of(left)) queue.push({merge->rank, left});
  };
  for (std::size_t i = 0; i + 1 < symbols.size(); ++i) offer(std::int32_t(i));
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[std::size_t(top.pos)];
    const Merge* merge = left.alive ? merge_of(top.pos) : nullptr;
    if (!merge || merge->rank != top.rank) continue;  // a stale entry
    Symbol& right = symbols[std::size_t(left.next)];
    left.id = merge->id;
    left.next = right.next;
    right.alive = false;
    if (left.next >= 0) symbols[std::size_t(left.next)].prev = top.pos;
    offer(left.prev);
    offer(top.pos);
  }
  for (std::int32_t i = 0; i >= 0; i = symbols[std::size_t(i)].next) {
    const Symbol& symbol = symbols[std::size_t(i)];
    if (symbol.id >= 0) {
      push(remap_[std::size_t(symbol.id)]);
    } else if (symbol.fixed >= 0) {
      push(symbol.fixed);
    } else {
      std::string bytes;
      append_utf8(bytes, symbol.cp);
      const bool all = byte_fallback_ && std::all_of(bytes.begin(), bytes.end(), [&](char c) {
                         return byte_ids_[static_cast<unsigned char>(c)] >= 0;
                       });
      if (all) {
        for (const char c : bytes) push(byte_ids_[static_cast<unsigned char>(c)]);
      } else if (unk_) {
        if (!(fuse_unk_ && last_unknown)) ids.push_back(*unk_);
        last_unknown = true;
      }
    }
  }
}

void BpeTokenizer::encode_words(const std::vector<std::u32string>& words,
                                std::vector<std::int32_t>& ids) const {
  bool last_unknown = false;  // fuse_unk: unknown tokens in a row, within one stretch, are one
  for (const auto& word : words) bpe(word, ids, last_unknown);
}

std::vector<std::int32_t> BpeTokenizer::encode(std::string_view text,
                                               bool add_special_tokens) const {
  std::vector<std::int32_t> ids;
  if (add_special_tokens) ids = prefix_;
  // As @huggingface/tokenizers' encode: the text cut at the added tokens matched before
  // normalization; each other stretch normalized, cut at those matched after it, then split into
  // words (Metaspace's "first": the first stretch) and merged.
  std::vector<std::u32string> stretches = added_.split(decode_utf8_replacing(text), false);
  if (!added_.empty()) added_.strip(stretches);
  for (std::size_t section = 0; section < stretches.size(); ++section) {
    const std::u32string& stretch = stretches[section];
    if (stretch.empty()) continue;
    if (const AddedToken* added = added_.empty() ? nullptr : added_.find(stretch)) {
      ids.push_back(added->id);
      continue;
    }
    const std::u32string normalized = normalizer_.empty() ? stretch : normalizer_(stretch);
    if (normalized.empty()) continue;
    std::vector<std::u32string> parts = added_.split(normalized, true);
    if (!added_.empty()) added_.strip(parts);
    for (const auto& part : parts) {
      if (part.empty()) continue;
      if (const AddedToken* added = added_.empty() ? nullptr : added_.find(part)) {
        ids.push_back(added->id);
        continue;
      }
      encode_words(pre_tokenizer_(part, section), ids);
    }
  }
  if (add_special_tokens) ids.insert(ids.end(), suffix_.begin(), suffix_.end());
  for (const std::int32_t id : ids) {
    if (std::size_t(id) >= model_vocab_) {
      throw Error("the text holds " + shown(token_text(id)) + " (token " + std::to_string(id) +
                  "), which the model's vocabulary of " + std::to_string(model_vocab_) +
                  " tokens does not have");
    }
  }
  return ids;
}

const std::string& BpeTokenizer::token_bytes(std::int32_t id) const {
  if (id < 0 || std::size_t(id) >= bytes_.size()) {
    throw Error("token id " + std::to_string(id) + " is out of range: the tokenizer has ids 0 to " +
                std::to_string(bytes_.size() - 1));
  }
  return bytes_[std::size_t(id)];
}

std::string BpeTokenizer::output_text(std::int32_t id) const {
  if (id >= 0 && std::size_t(id) >= bytes_.size() && std::size_t(id) < model_vocab_) {
    return "[id " + std::to_string(id) + ": no token]";
  }
  return token_text(id);
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

void BpeTokenizer::check_fits(std::size_t model_vocab) {
  const auto beyond = [&](std::int32_t id) { return std::size_t(id) >= model_vocab; };
  if (largest_vocabulary_id_ >= 0 && beyond(largest_vocabulary_id_)) {
    throw Error("the tokenizer has " + std::to_string(bytes_.size()) +
                " tokens but the model's vocabulary has " + std::to_string(model_vocab) +
                " (config.json's vocab_size): they do not belong together");
  }
  for (const auto* ids : {&prefix_, &suffix_}) {
    for (const std::int32_t id : *ids) {
      if (beyond(id)) {
        throw Error("the tokenizer's post_processor adds " + shown(token_text(id)) + " (token " +
                    std::to_string(id) + "), which the model's vocabulary of " +
                    std::to_string(model_vocab) + " tokens does not have");
      }
    }
  }
  model_vocab_ = model_vocab;
}

}  // namespace attn
