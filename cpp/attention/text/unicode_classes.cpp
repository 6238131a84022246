// The lookups of GPT-2's pre-tokenizer classes (see unicode_classes.hpp): a binary search in the
// code point ranges that scripts/data/make-unicode-classes.mjs generates into unicode_tables.inc.
#include "attention/text/unicode_classes.hpp"

#include <algorithm>
#include <iterator>

namespace attn {

namespace {

struct Range {
  char32_t first, last;
};

#include "attention/text/unicode_tables.inc"

template <std::size_t N>
bool in(const Range (&table)[N], char32_t cp) {
  const Range* it = std::upper_bound(std::begin(table), std::end(table), cp,
                                     [](char32_t c, const Range& r) { return c < r.first; });
  return it != std::begin(table) && cp <= (it - 1)->last;
}

}  // namespace

const char* unicode_classes_version() {
  return kUnicodeVersion;
}
bool is_letter(char32_t cp) {
  return in(kLetters, cp);
}
bool is_number(char32_t cp) {
  return in(kNumbers, cp);
}
bool is_js_space(char32_t cp) {
  return in(kSpaces, cp);
}

}  // namespace attn
