// tokenizer.json's normalizers, see normalizer.hpp.
#include "attention/text/normalizer.hpp"

#include <utility>

#include "attention/error.hpp"
#include "attention/utf8.hpp"

namespace attn {

Normalizer::Normalizer(std::vector<NormalizerStep> steps, UnicodeNormalize nfc)
    : steps_(std::move(steps)), nfc_(std::move(nfc)) {
  if (needs_nfc() && !nfc_) {
    throw Error(
        "tokenizer.json's normalizer NFC needs Unicode normalization, which this build "
        "of the core leaves to JavaScript and was not given");
  }
}

bool Normalizer::needs_nfc() const {
  for (const NormalizerStep& step : steps_) {
    if (step.kind == NormalizerStep::kNfc) return true;
  }
  return false;
}

std::u32string Normalizer::operator()(std::u32string text) const {
  for (const NormalizerStep& step : steps_) {
    switch (step.kind) {
      case NormalizerStep::kNfc: {
        std::string utf8;
        for (const char32_t cp : text) append_utf8(utf8, cp);
        text = decode_utf8_replacing(nfc_(utf8));
        break;
      }
      case NormalizerStep::kPrepend:
        // The Hub's tokenizers prepend only to non-empty text (an empty stretch is dropped first).
        if (!text.empty()) text = step.text + text;
        break;
      case NormalizerStep::kReplace: {
        std::u32string out;
        std::size_t pos = 0;
        while (true) {
          const std::size_t found = text.find(step.text, pos);
          if (found == std::u32string::npos) break;
          out.append(text, pos, found - pos);
          out += step.replacement;
          pos = found + step.text.size();
        }
        out.append(text, pos);
        text = std::move(out);
        break;
      }
    }
  }
  return text;
}

}  // namespace attn
