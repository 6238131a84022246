// UTF-8 decoding, encoding and validation: the one UTF-8 module of the core (tokenizers, alphabets,
// the safetensors header parser).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace attn {

struct Utf8Char {
  char32_t code_point = 0;
  std::size_t length = 0;  // bytes of the sequence; 0 when it is malformed
  std::string error;       // why it is malformed, e.g. "overlong encoding"; empty when valid
};

// Decodes the sequence starting at text[pos] (pos < text.size()). Malformed: a stray
// continuation byte, an invalid lead byte, a truncated sequence, an overlong form, a UTF-16
// surrogate, or a code point above U+10FFFF.
Utf8Char decode_utf8(std::string_view text, std::size_t pos);

// Byte offset of the first malformed sequence, or std::string_view::npos if text is valid.
std::size_t first_invalid_utf8(std::string_view text);

// Appends the UTF-8 of code point cp (<= U+10FFFF) to out.
void append_utf8(std::string& out, char32_t cp);

// Decodes UTF-8 as the WHATWG TextDecoder does: each maximal invalid subpart becomes U+FFFD.
// So bytes tokenize as the JS string `new TextDecoder().decode(bytes)` does in the reference.
std::u32string decode_utf8_replacing(std::string_view bytes);

}  // namespace attn
