// The one exception type the core throws: its message is shown to the user as is.
#pragma once

#include <stdexcept>
#include <string>

namespace attn {

// Thrown for every bad input (shapes, options, files, sizes). Messages name the problem and
// the expected value, e.g. "x has 63 values, expected n * d_model = 4 * 16 = 64".
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace attn
