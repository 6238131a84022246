// The step records the page draws: every intermediate of a forward, named, with its equation.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attn {

// Step ids, in the order the page walks through them (DESIGN.md "Every intermediate is a
// named step"). q_rotated / k_rotated appear with RoPE, alibi with ALiBi, source with
// cross-attention, positional with sinusoidal / learned encodings.
inline const std::vector<std::string>& step_order() {
  static const std::vector<std::string> order = {
      "embedding", "positional", "input",     "source", "q",      "k",
      "v",         "q_rotated",  "k_rotated", "scores", "scaled", "alibi",
      "masked",    "weights",    "context",   "concat", "output"};
  return order;
}

struct Step {
  std::string id;                  // one of step_order()
  std::string title;               // e.g. "Scaled scores"
  std::string equation;            // LaTeX, e.g. "\tilde{S}_1 = S_1 / \sqrt{4}"
  std::vector<std::size_t> shape;  // [rows, cols]
  int head = -1;                   // 0-based head, or -1 for steps shared by all heads
  std::string rows;                // what a row is: "query", "key" or "position"
  std::string cols;                // what a column is: "key" or "dimension"
  std::vector<float> data;         // row-major, shape[0] * shape[1] values; -inf = masked
};

struct Trace {
  std::vector<Step> steps;
};

}  // namespace attn
