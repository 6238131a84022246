// tokenizer.json's added tokens, see added_tokens.hpp.
#include "attention/text/added_tokens.hpp"

#include <algorithm>

#include "attention/text/unicode_classes.hpp"
#include "attention/utf8.hpp"

namespace attn {

AddedVocabulary::AddedVocabulary(const std::vector<AddedToken>& tokens,
                                 const Normalizer& normalizer)
    : tokens_(tokens) {
  // As the reference builds its map: each token's content, then its normalized content (a later
  // token with the same text wins).
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    const std::u32string content = decode_utf8_replacing(tokens_[i].content);
    by_text_.insert_or_assign(content, i);
    by_content_.insert_or_assign(content, i);
    if (tokens_[i].normalized && !normalizer.empty()) {
      const std::u32string normalized = normalizer(content);
      by_text_.insert_or_assign(normalized, i);
      add_start(normalized_starts_, normalized);
    } else {
      add_start(raw_starts_, content);
    }
  }
}

void AddedVocabulary::add_start(Starts& starts, const std::u32string& text) {
  if (text.empty()) return;
  auto& list = starts[text[0]];
  list.push_back(text);
  std::stable_sort(list.begin(), list.end(), [](const std::u32string& a, const std::u32string& b) {
    return a.size() > b.size();
  });
}

std::vector<std::u32string> AddedVocabulary::split(std::u32string_view text,
                                                   bool normalized) const {
  const Starts& starts = normalized ? normalized_starts_ : raw_starts_;
  std::vector<std::u32string> out;
  if (starts.empty()) {
    out.emplace_back(text);
    return out;
  }
  std::size_t start = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto found = starts.find(text[pos]);
    const std::u32string* match = nullptr;
    if (found != starts.end()) {
      for (const auto& candidate : found->second) {
        if (text.substr(pos, candidate.size()) == candidate) {
          match = &candidate;
          break;
        }
      }
    }
    if (!match) {
      ++pos;
      continue;
    }
    if (pos > start) out.emplace_back(text.substr(start, pos - start));
    out.push_back(*match);
    pos += match->size();
    start = pos;
  }
  if (start < text.size()) out.emplace_back(text.substr(start));
  return out;
}

const AddedToken* AddedVocabulary::find(std::u32string_view stretch) const {
  const auto found = by_text_.find(std::u32string(stretch));
  return found == by_text_.end() ? nullptr : &tokens_[found->second];
}

const AddedToken* AddedVocabulary::find_content(std::u32string_view text) const {
  const auto found = by_content_.find(std::u32string(text));
  return found == by_content_.end() ? nullptr : &tokens_[found->second];
}

void AddedVocabulary::strip(std::vector<std::u32string>& stretches) const {
  for (std::size_t i = 0; i < stretches.size(); ++i) {
    const AddedToken* token = find(stretches[i]);
    if (!token) continue;
    if (token->lstrip && i > 0) {
      std::u32string& before = stretches[i - 1];
      while (!before.empty() && is_js_space(before.back())) before.pop_back();
    }
    if (token->rstrip && i + 1 < stretches.size()) {
      std::u32string& after = stretches[i + 1];
      std::size_t n = 0;
      while (n < after.size() && is_js_space(after[n])) ++n;
      after.erase(0, n);
    }
  }
}

}  // namespace attn
