// The step records the page draws: every intermediate of a forward, by kind, with its data.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attention/layer/steps.hpp"

namespace attn {

// One recorded intermediate (ARCHITECTURE.md "The step catalog"). Its id, axes and
// generic title come from the catalog (steps.hpp); its title and LaTeX equation for this layer
// and forward from step_text (step_text.hpp).
struct Step {
  StepKind kind = StepKind::Embedding;
  int head = -1;                   // 0-based head, or -1 for steps shared by all heads
  std::vector<std::size_t> shape;  // [rows, cols]
  std::vector<float> data;         // row-major, shape[0] * shape[1] values; -inf = masked
  std::string id() const { return step_id(kind); }
};

// In walkthrough order (StepKind order, then head).
struct Trace {
  std::vector<Step> steps;
};

}  // namespace attn
