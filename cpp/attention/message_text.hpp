// How messages write numbers and shapes: "[2, 3]", 1.5 and NaN as JavaScript writes them (the
// words every attn::Error uses, so the core's messages read alike).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>
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

}  // namespace attn
