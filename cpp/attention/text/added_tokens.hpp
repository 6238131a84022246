// tokenizer.json's added tokens: found in the text before the model sees it, each its own id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attention/text/normalizer.hpp"

namespace attn {

struct AddedToken {
  std::string content;  // UTF-8, not empty
  std::int32_t id = 0;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;    // matched in the normalized text (when there is a normalizer)
  bool single_word = false;  // read, not applied (as the reference @huggingface/tokenizers)
};

// Added tokens (special or not) are found in the raw text before normalization, or, a "normalized"
// one with a normalizer, in the normalized text; the longest first at each position; lstrip and
// rstrip trim the white space beside them: as @huggingface/tokenizers does.
class AddedVocabulary {
 public:
  AddedVocabulary() = default;
  AddedVocabulary(const std::vector<AddedToken>& tokens, const Normalizer& normalizer);

  bool empty() const { return by_text_.empty(); }

  // Text cut before and after each added token it holds (the longest at each position, left to
  // right); the tokens are stretches of their own. normalized: the tokens matched after
  // normalization, else those matched before.
  std::vector<std::u32string> split(std::u32string_view text, bool normalized) const;

  // The added token a stretch is (its content, or its normalized content), or nullptr.
  const AddedToken* find(std::u32string_view stretch) const;

  // The added token whose content is `text` (not its normalized form), or nullptr.
  const AddedToken* find_content(std::u32string_view text) const;

  // The neighbours of each added token with lstrip (rstrip) lose their trailing (leading)
  // JavaScript white space, stretch by stretch from the first.
  void strip(std::vector<std::u32string>& stretches) const;

 private:
  // contents by their first character, the longest first
  using Starts = std::unordered_map<char32_t, std::vector<std::u32string>>;
  static void add_start(Starts& starts, const std::u32string& text);

  std::vector<AddedToken> tokens_;
  std::unordered_map<std::u32string, std::size_t> by_text_;     // content and normalized content
  std::unordered_map<std::u32string, std::size_t> by_content_;  // content
  Starts raw_starts_;
  Starts normalized_starts_;
};

}  // namespace attn
