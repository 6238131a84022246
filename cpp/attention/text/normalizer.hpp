// tokenizer.json's normalizers: NFC (the caller's Unicode normalization), Prepend, Replace.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace attn {

// Unicode normalization of UTF-8 text to NFC, given by the caller: the core has no composition
// tables; in the browser and Node it is String.prototype.normalize('NFC').
using UnicodeNormalize = std::function<std::string(const std::string& utf8)>;

struct NormalizerStep {
  enum Kind { kNfc, kPrepend, kReplace } kind = kNfc;
  std::u32string text;         // kPrepend: what is put in front; kReplace: the string replaced
  std::u32string replacement;  // kReplace
};

// The steps in order, applied to each stretch of text between added tokens.
class Normalizer {
 public:
  Normalizer() = default;
  // Throws attn::Error if a step is NFC and nfc is empty.
  Normalizer(std::vector<NormalizerStep> steps, UnicodeNormalize nfc);

  bool empty() const { return steps_.empty(); }
  bool needs_nfc() const;
  std::u32string operator()(std::u32string text) const;

 private:
  std::vector<NormalizerStep> steps_;
  UnicodeNormalize nfc_;
};

}  // namespace attn
