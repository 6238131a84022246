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
  // 0-based head, or -1 for steps shared by all heads. For the steps that are one per key/value
  // head (k, v, k_rotated: StepInfo::per_kv_head) it is the key/value head, 0 … kv_heads − 1;
  // for the others, a query head.
  int head = -1;
  // The key/value head of a per-head step: for k, v and k_rotated the head itself; for a query
  // head h's steps, the one its scores and context read, h / (heads / kv_heads) (= h without
  // grouped-query attention); -1 for shared steps.
  int kv_head = -1;
  std::vector<std::size_t> shape;  // [rows, cols]
  std::vector<float> data;         // row-major, shape[0] * shape[1] values; -inf = masked
  std::string id() const { return step_id(kind); }
};

// In walkthrough order (StepKind order, then head).
struct Trace {
  std::vector<Step> steps;
};

}  // namespace attn
