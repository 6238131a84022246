// UTF-8 decoding, encoding and validation (see utf8.hpp).
#include "attention/utf8.hpp"

#include <utility>

namespace attn {

namespace {

struct Sequence {
  std::size_t length = 0;  // bytes, lead included; 0 for a byte that cannot lead
  char32_t lead_bits = 0;  // payload bits of the lead byte
  char32_t smallest = 0;   // anything below this is an overlong encoding
  const char* error = "";
};

Sequence sequence_for_lead(unsigned char lead) {
  if (lead < 0x80) return {1, lead, 0};
  if (lead < 0xC0) return {0, 0, 0, "unexpected continuation byte"};
  if (lead < 0xE0) return {2, lead & 0x1Fu, 0x80};
  if (lead < 0xF0) return {3, lead & 0x0Fu, 0x800};
  if (lead < 0xF8) return {4, lead & 0x07u, 0x10000};
  return {0, 0, 0, "invalid lead byte"};
}

Utf8Char malformed(std::string error) {
  return {0, 0, std::move(error)};
}

}  // namespace

Utf8Char decode_utf8(std::string_view text, std::size_t pos) {
  const Sequence sequence = sequence_for_lead(static_cast<unsigned char>(text[pos]));
  if (sequence.length == 0) return malformed(sequence.error);
  char32_t value = sequence.lead_bits;
  for (std::size_t i = 1; i < sequence.length; ++i) {
    if (pos + i >= text.size()) return malformed("truncated sequence at the end of the text");
    const auto next = static_cast<unsigned char>(text[pos + i]);
    if ((next & 0xC0) != 0x80) {
      return malformed("truncated sequence (byte " + std::to_string(pos + i) +
                       " is not a continuation byte)");
    }
    value = (value << 6) | (next & 0x3F);
  }
  if (value < sequence.smallest) return malformed("overlong encoding");
  if (value >= 0xD800 && value <= 0xDFFF) return malformed("encoded UTF-16 surrogate");
  if (value > 0x10FFFF) return malformed("code point above U+10FFFF");
  return {value, sequence.length, {}};
}

std::size_t first_invalid_utf8(std::string_view text) {
  for (std::size_t pos = 0; pos < text.size();) {
    const Utf8Char c = decode_utf8(text, pos);
    if (c.length == 0) return pos;
    pos += c.length;
  }
  return std::string_view::npos;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

std::u32string decode_utf8_replacing(std::string_view bytes) {
  std::u32string out;
  out.reserve(bytes.size());
  std::size_t needed = 0, seen = 0;
  char32_t cp = 0;
  unsigned lower = 0x80, upper = 0xBF;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const unsigned b = static_cast<unsigned char>(bytes[i]);
    if (needed == 0) {
      if (b < 0x80) {
        out += char32_t(b);
      } else if (b >= 0xC2 && b <= 0xDF) {
        needed = 1;
        cp = b & 0x1F;
      } else if (b >= 0xE0 && b <= 0xEF) {
        if (b == 0xE0) lower = 0xA0;
        if (b == 0xED) upper = 0x9F;
        needed = 2;
        cp = b & 0xF;
      } else if (b >= 0xF0 && b <= 0xF4) {
        if (b == 0xF0) lower = 0x90;
        if (b == 0xF4) upper = 0x8F;
        needed = 3;
        cp = b & 0x7;
      } else {
        out += U'\uFFFD';
      }
      continue;
    }
    if (b < lower || b > upper) {  // the sequence so far is one U+FFFD; b starts afresh
      needed = seen = 0;
      cp = 0;
      lower = 0x80;
      upper = 0xBF;
      out += U'\uFFFD';
      --i;
      continue;
    }
    lower = 0x80;
    upper = 0xBF;
    cp = (cp << 6) | (b & 0x3F);
    if (++seen == needed) {
      out += cp;
      needed = seen = 0;
      cp = 0;
    }
  }
  if (needed != 0) out += U'\uFFFD';
  return out;
}

}  // namespace attn
