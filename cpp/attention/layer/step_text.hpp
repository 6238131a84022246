// The words and LaTeX of a traced step: its title and equation for this layer and forward,
// rendered from the catalog, the layer's config and the forward's recorded options.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "attention/layer/options.hpp"
#include "attention/layer/steps.hpp"

namespace attn {

class AttentionLayer;
struct Step;

struct StepText {
  std::string title;     // e.g. "Scaled scores, head 1"
  std::string equation;  // LaTeX, e.g. "\tilde{S}_{1} = \frac{S_{1}}{\sqrt{d_k}} = …"
};

// What a step's text depends on besides its kind and head.
struct StepTextContext {
  LayerConfig config;
  std::size_t head_dim = 0;             // 0: generic ("d_k" without its value)
  std::span<const float> alibi_slopes;  // empty: generic (no slope value)
  bool cross = false;
  bool scale = true;
};

// head: 0-based for per-head steps (named 1-based in the text), -1 for shared steps, or -2 for
// the generic form with "%" where the 1-based head number goes (the catalog's).
StepText step_text(StepKind kind, int head, const StepTextContext& context);

// The text of a step of the layer's last forward (its config, d_k, slopes and options).
StepText step_text(const AttentionLayer& layer, const Step& step);

// The catalog's generic equation of a kind ("%" marks the head number).
std::string generic_equation(StepKind kind);

}  // namespace attn
