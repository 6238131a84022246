// How messages write numbers, counts, shapes and a file's own text: "[2, 3]", 1.5 and NaN as
// JavaScript writes them, "2 entries", 'name\x27s' (the words every attn::Error uses, so the
// core's messages read alike).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

// "[2, 3]"
inline std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// 1.5, 1e-05, NaN (printf's %g, NaN spelled as JavaScript spells it).
inline std::string number_text(double value) {
  if (std::isnan(value)) return "NaN";
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// A whole number in full ("10000", "1000000", where %g would write 1e+06), anything else as %g: a
// RoPE base in an equation or an explanation.
inline std::string whole_number_text(double value) {
  char text[32];
  if (value == std::floor(value) && value < 1e15) {
    std::snprintf(text, sizeof text, "%.0f", value);
  } else {
    std::snprintf(text, sizeof text, "%g", value);
  }
  return text;
}

// "1 entry", "2 entries", "3 bytes".
inline std::string count_text(std::uint64_t count, const std::string& noun) {
  if (count == 1) return "1 " + noun;
  if (!noun.empty() && noun.back() == 'y') {
    return std::to_string(count) + " " + noun.substr(0, noun.size() - 1) + "ies";
  }
  return std::to_string(count) + " " + noun + "s";
}

// Text from a file, safe to show: control and non-ASCII bytes, ' and \ escaped as \xNN, cut
// short ("...") past 80 bytes, so a hostile name can neither flood nor forge a message.
inline std::string escaped_text(std::string_view text) {
  constexpr std::size_t kMaxBytes = 80;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < kMaxBytes; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7F || c == '\'' || c == '\\') {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > kMaxBytes) out += "...";
  return out;
}

// 'text', escaped as escaped_text does.
inline std::string quoted_text(std::string_view text) {
  return "'" + escaped_text(text) + "'";
}

}  // namespace attn
