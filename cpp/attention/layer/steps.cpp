// The step catalog (see steps.hpp).
#include "attention/layer/steps.hpp"

#include <array>
#include <iterator>

namespace attn {

namespace {

using K = StepKind;
using C = StepCondition;
constexpr StepInfo kSteps[] = {
    {K::Embedding, "embedding", "Token embeddings", false, "position", "dimension", C::Always},
    {K::Positional, "positional", "Positional encoding", false, "position", "dimension",
     C::AdditivePositional},
    {K::Input, "input", "Input to attention", false, "position", "dimension", C::Always},
    {K::Source, "source", "Source sequence (keys and values)", false, "position", "dimension",
     C::Cross},
    {K::Q, "q", "Queries", true, "query", "dimension", C::Always},
    {K::K, "k", "Keys", true, "key", "dimension", C::Always, true},
    {K::V, "v", "Values", true, "key", "dimension", C::Always, true},
    {K::QNormed, "q_normed", "Queries normalised (q_norm)", true, "query", "dimension", C::QkNorm},
    {K::KNormed, "k_normed", "Keys normalised (k_norm)", true, "key", "dimension", C::QkNorm, true},
    {K::QRotated, "q_rotated", "Queries rotated by position (RoPE)", true, "query", "dimension",
     C::Rope},
    {K::KRotated, "k_rotated", "Keys rotated by position (RoPE)", true, "key", "dimension", C::Rope,
     true},
    {K::Scores, "scores", "Scores QKᵀ", true, "query", "key", C::Always},
    {K::Scaled, "scaled", "Scaled scores", true, "query", "key", C::Always},
    {K::Capped, "capped", "Soft-capped scores", true, "query", "key", C::Softcap},
    {K::Alibi, "alibi", "ALiBi distance bias", true, "query", "key", C::Alibi},
    {K::Masked, "masked", "Masked scores", true, "query", "key", C::Always},
    {K::Weights, "weights", "Attention weights", true, "query", "key", C::Always},
    {K::Context, "context", "Weighted sum of values", true, "query", "dimension", C::Always},
    {K::Concat, "concat", "Heads concatenated", false, "query", "dimension", C::Always},
    {K::Output, "output", "Output projection", false, "query", "dimension", C::Always},
};

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < std::size(kSteps); ++i) {
    if (static_cast<std::size_t>(kSteps[i].kind) != i) return false;
  }
  return true;
}
static_assert(in_enum_order(), "the catalog lists every StepKind once, in enum order");
static_assert(std::size(kSteps) == static_cast<std::size_t>(StepKind::Output) + 1);

}  // namespace

std::span<const StepInfo> step_catalog() {
  return kSteps;
}

const StepInfo& step_info(StepKind kind) {
  return kSteps[static_cast<std::size_t>(kind)];
}

std::optional<StepKind> find_step_kind(std::string_view id) {
  for (const auto& step : kSteps) {
    if (id == step.id) return step.kind;
  }
  return std::nullopt;
}

namespace {

// Each condition, by StepCondition: what a trace needs for the step to appear, and the positional
// encodings it holds for (none: it does not depend on one).
struct ConditionInfo {
  const char* text;
  std::array<PositionalKind, 2> positional;
  std::size_t positional_count;
};
constexpr ConditionInfo kConditions[] = {
    {"a traced forward", {}, 0},
    {"positional: 'sinusoidal' or 'learned'",
     {PositionalKind::Sinusoidal, PositionalKind::Learned},
     2},
    {"cross-attention (a kv source)", {}, 0},
    {"positional: 'rope'", {PositionalKind::Rope}, 1},
    {"positional: 'alibi'", {PositionalKind::Alibi}, 1},
    {"a soft-cap of the scores (a checkpoint's attn_logit_softcapping: Gemma 2)", {}, 0},
    {"q/k norms (a checkpoint's q_norm and k_norm: Qwen3, Gemma 3, OLMo 2)", {}, 0},
};
static_assert(std::size(kConditions) == static_cast<std::size_t>(StepCondition::QkNorm) + 1);

const ConditionInfo& condition_info(StepCondition condition) {
  return kConditions[static_cast<std::size_t>(condition)];
}

}  // namespace

const char* condition_text(StepCondition condition) {
  return condition_info(condition).text;
}

std::vector<PositionalKind> condition_positional(StepCondition condition) {
  const ConditionInfo& info = condition_info(condition);
  return {info.positional.begin(), info.positional.begin() + info.positional_count};
}

bool condition_holds(StepCondition condition, PositionalKind positional, bool cross) {
  if (condition == C::Always) return true;
  if (condition == C::Cross) return cross;
  for (const PositionalKind kind : condition_positional(condition)) {
    if (kind == positional) return true;
  }
  return false;
}

}  // namespace attn
