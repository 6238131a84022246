// The step catalog: every intermediate a traced forward records, in walkthrough order, with its
// id, generic title, axes and when it appears. The one list the trace, explain, the bindings and
// (through lens.catalog) the page read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "attention/ops/positional.hpp"

namespace attn {

// In walkthrough order: the trace's steps are sorted by this enum.
enum class StepKind : std::uint8_t {
  Embedding,
  Positional,
  Input,
  Source,
  Q,
  K,
  V,
  QNormed,
  KNormed,
  QRotated,
  KRotated,
  Scores,
  Scaled,
  Capped,
  Alibi,
  Masked,
  Weights,
  Context,
  Concat,
  Output,
};

// When a step is in a trace.
enum class StepCondition : std::uint8_t {
  Always,
  AdditivePositional,  // positional: sinusoidal or learned
  Cross,               // cross-attention (a kv source)
  Rope,                // positional: rope
  Alibi,               // positional: alibi
  Softcap,             // a soft-cap of the scores (a checkpoint's attn_logit_softcapping)
  QkNorm,              // q/k norms (a checkpoint's q_norm and k_norm)
};

struct StepInfo {
  StepKind kind;
  const char* id;     // e.g. "q_rotated"
  const char* title;  // generic, e.g. "Queries"; per-head titles add ", head h"
  bool per_head;      // one grid per head (else one shared by all heads)
  const char* rows;   // what a row is: "query", "key" or "position"
  const char* cols;   // what a column is: "key" or "dimension"
  StepCondition appears;
  // One grid per key/value head (k, v, k_rotated): kv_heads grids, as many as per_head's heads
  // unless the layer groups its query heads (grouped-query attention); Step::head is then the
  // key/value head.
  bool per_kv_head = false;
};

// Every step, in walkthrough order (= StepKind order).
std::span<const StepInfo> step_catalog();
const StepInfo& step_info(StepKind kind);
inline const char* step_id(StepKind kind) {
  return step_info(kind).id;
}
// The kind with this id, or nothing.
std::optional<StepKind> find_step_kind(std::string_view id);

// The condition in words, e.g. "positional: 'sinusoidal' or 'learned'"; "a traced forward" for
// Always.
const char* condition_text(StepCondition condition);
// The positional encodings the condition asks for (empty for Always and Cross).
std::vector<PositionalKind> condition_positional(StepCondition condition);
// Whether a step with this condition is in the trace of a layer with `positional`.
bool condition_holds(StepCondition condition, PositionalKind positional, bool cross);

}  // namespace attn
