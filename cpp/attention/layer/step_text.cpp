// Titles and LaTeX equations of traced steps (see step_text.hpp).
#include "attention/layer/step_text.hpp"

#include <string>

#include "attention/layer/layer.hpp"

namespace attn {

namespace {

// `%` -> `label` everywhere in `text`.
std::string substitute(std::string text, const std::string& label) {
  for (auto pos = text.find('%'); pos != std::string::npos; pos = text.find('%', pos)) {
    text.replace(pos, 1, label);
    pos += label.size();
  }
  return text;
}

// The equation with "%" for the head number.
std::string equation(StepKind kind, int head, const StepTextContext& c) {
  const bool additive = is_additive(c.config.positional);
  const bool rope = c.config.positional == PositionalKind::Rope;
  const bool alibi = c.config.positional == PositionalKind::Alibi;
  const std::string bias_term = alibi ? " + B_{%}" : "";
  auto projection = [&](const std::string& m, const std::string& from) {
    const std::string bias = c.config.bias ? " + b_{" + m + ",%}" : "";
    return m + "_{%} = " + from + "_{in} W_{" + m + ",%}^\\top" + bias;
  };
  const std::string source = c.cross ? "X_{src}" : "X";
  switch (kind) {
    case StepKind::Embedding:
      return R"(X \in \mathbb{R}^{n \times d_{model}})";
    case StepKind::Positional:
      if (c.config.positional == PositionalKind::Learned) {
        return R"(PE = P[0{:}n] \quad (P \text{ a learned table, one row per position}))";
      }
      return R"(PE_{(pos,2i)} = \sin\left(\frac{pos}{10000^{2i/d_{model}}}\right),\quad )"
             R"(PE_{(pos,2i+1)} = \cos\left(\frac{pos}{10000^{2i/d_{model}}}\right))";
    case StepKind::Input:
      return std::string("X_{in} = X") + (additive ? " + PE" : "");
    case StepKind::Source:
      return std::string("X_{src}_{in} = X_{src}") + (additive ? " + PE" : "");
    case StepKind::Q:
      return projection("Q", "X");
    case StepKind::K:
      return projection("K", source);
    case StepKind::V:
      return projection("V", source);
    case StepKind::QRotated:
      return R"(\hat{q}_{pos} = R_{\Theta, pos}\, q_{pos},\ \theta_i = 10000^{-2i/d_k})";
    case StepKind::KRotated:
      return R"(\hat{k}_{pos} = R_{\Theta, pos}\, k_{pos},\ \theta_i = 10000^{-2i/d_k})";
    case StepKind::Scores: {
      const std::string q = rope ? "\\hat{Q}" : "Q";
      const std::string k = rope ? "\\hat{K}" : "K";
      return "S_{%} = " + q + "_{%} " + k + "_{%}^\\top,\\quad S_{ij} = q_i \\cdot k_j";
    }
    case StepKind::Scaled:
      if (!c.scale) return "\\tilde{S}_{%} = S_{%} \\quad (\\text{scaling off})";
      return "\\tilde{S}_{%} = \\frac{S_{%}}{\\sqrt{d_k}}" +
             (c.head_dim > 0 ? " = \\frac{S_{%}}{\\sqrt{" + std::to_string(c.head_dim) + "}}"
                             : std::string());
    case StepKind::Alibi: {
      const bool slope = head >= 0 && std::size_t(head) < c.alibi_slopes.size();
      return "B_{%,ij} = -m_{%} |i - j|" +
             (slope ? ",\\quad m_{%} = " + std::to_string(c.alibi_slopes[std::size_t(head)])
                    : std::string());
    }
    case StepKind::Masked:
      return "\\tilde{S}_{%}" + bias_term +
             " + M,\\quad M_{ij} = \\begin{cases} 0 & \\text{visible} \\\\ -\\infty & "
             "\\text{masked} \\end{cases}";
    case StepKind::Weights:
      return "A_{%} = \\operatorname{softmax}_{\\text{row}}\\left(\\tilde{S}_{%}" + bias_term +
             " + M\\right),\\quad A_{ij} = \\frac{e^{x_{ij} - \\max_k x_{ik}}}{\\sum_k "
             "e^{x_{ik} - \\max_k x_{ik}}}";
    case StepKind::Context:
      return "Z_{%} = A_{%} V_{%},\\quad z_i = \\sum_j A_{ij} v_j";
    case StepKind::Concat:
      return R"(Z = \operatorname{Concat}(Z_1, \ldots, Z_h) \in \mathbb{R}^{n \times h d_k})";
    case StepKind::Output:
      if (!c.config.out_proj) return "Y = Z";
      return c.config.bias ? R"(Y = Z W_O^\top + b_O)" : R"(Y = Z W_O^\top)";
  }
  return {};
}

std::string title(StepKind kind, const StepTextContext& c) {
  switch (kind) {
    case StepKind::Positional:
      return c.config.positional == PositionalKind::Learned ? "Learned positional embedding"
                                                            : "Sinusoidal positional encoding";
    case StepKind::Output:
      return c.config.out_proj ? "Output projection" : "Output (no output projection)";
    default:
      return step_info(kind).title;
  }
}

}  // namespace

StepText step_text(StepKind kind, int head, const StepTextContext& context) {
  const std::string label = head >= 0 ? std::to_string(head + 1) : "%";
  StepText text{title(kind, context), substitute(equation(kind, head, context), label)};
  if (step_info(kind).per_head && head >= 0) text.title += ", head " + label;
  return text;
}

StepText step_text(const AttentionLayer& layer, const Step& step) {
  const ForwardOptions& options = layer.last_result().options;
  StepTextContext context;
  context.config = layer.config();
  context.head_dim = layer.head_dim();
  context.alibi_slopes = layer.alibi_slopes();
  context.cross = options.cross;
  context.scale = options.scale;
  return step_text(step.kind, step.head, context);
}

std::string generic_equation(StepKind kind) {
  StepTextContext generic;  // bias, scaling, an additive encoding, no head_dim or slopes
  generic.config.positional = PositionalKind::Sinusoidal;
  return step_text(kind, -2, generic).equation;
}

}  // namespace attn
