// Titles and LaTeX equations of traced steps (see step_text.hpp).
#include "attention/layer/step_text.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "attention/layer/layer.hpp"
#include "attention/message_text.hpp"

namespace attn {

namespace {

// RoPE's equation for q or k ("q", "k") under the config's spec: R_Θ on adjacent pairs, or
// rotate_half on the pairs (i, i + d_k/2); θ_i from the base or rescaled (rope_scaling); with
// rotary dims r, on each head's first r dimensions only (θ_i = base^(−2i/r)), the rest passed
// through (head_dim: d_k, 0 when unknown).
std::string rope_equation(const std::string& v, const RopeSpec& spec, std::size_t head_dim) {
  const bool partial = spec.rotary_dims != 0;
  const std::string d = partial ? "r" : "d_k";
  const std::string theta = spec.frequencies.empty()
                                ? "\\theta_i = " + whole_number_text(spec.base) + "^{-2i/" + d + "}"
                                : "\\theta_i = " + whole_number_text(spec.base) + "^{-2i/" + d +
                                      "} \\text{ rescaled (rope\\_scaling)}";
  const std::string part =
      !partial
          ? ""
          : ",\\ \\text{on the first } r = " + std::to_string(spec.rotary_dims) + " \\text{ of " +
                (head_dim ? "the " + std::to_string(head_dim) : std::string("d_k")) +
                " dimensions; the rest pass through}";
  if (spec.pairing == RopePairing::RotateHalf) {
    return "\\hat{" + v + "}_{pos} = " + v + "_{pos} \\cos(pos\\,\\theta) + " +
           "\\operatorname{rotate\\_half}(" + v + "_{pos}) \\sin(pos\\,\\theta),\\ " + theta + part;
  }
  return "\\hat{" + v + "}_{pos} = R_{\\Theta, pos}\\, " + v + "_{pos},\\ " + theta + part;
}

// The q/k norm's equation for q or k ("q", "k"): RMSNorm of each head's d_k values, or of all the
// heads' values of a row at once (the whole projection, before the head split), times w or
// Gemma's 1 + w.
std::string qk_norm_equation(const std::string& v, const LayerConfig& config) {
  const std::string w =
      config.qk_norm_weight == RmsNormWeight::OnePlus ? "(1 + w_" + v + ")" : "w_" + v;
  const bool whole = config.qk_norm == QkNorm::Whole;
  const std::string width = whole ? (v == "q" ? "h\\,d_k" : "h_{kv} d_k") : "d_k";
  return "\\bar{" + v + "}_{pos} = \\frac{" + v + "_{pos}}{\\sqrt{\\tfrac{1}{" + width +
         "} \\sum_t " + v + "_{pos,t}^2 + \\varepsilon}} \\odot " + w + ",\\ " +
         (whole ? "\\text{over every head's values of the row at once, before the head split}"
                : "\\text{each head on its own}");
}

// The 1-based key/value head that query head `head`'s equations name (K_{g}, V_{g}).
std::string kv_label(int head, const StepTextContext& c) {
  if (head < 0) return "g(%)";
  const std::size_t group = c.config.heads / kv_heads_of(c.config);
  return std::to_string(std::size_t(head) / group + 1);
}

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
  // The key/value head a query head reads: its own number unless heads share them.
  const std::string kv_sub = kv_heads_of(c.config) == c.config.heads ? "%" : kv_label(head, c);
  const std::string bias_term = alibi ? " + B_{%}" : "";
  // The scores the mask takes: the scaled ones, or their soft-capped form.
  const bool capped = c.config.softcap > 0.0;
  const std::string logits = capped ? "\\hat{S}_{%}" : "\\tilde{S}_{%}";
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
    case StepKind::QNormed:
      return qk_norm_equation("q", c.config);
    case StepKind::KNormed:
      return qk_norm_equation("k", c.config);
    case StepKind::QRotated:
      return rope_equation("q", c.config.rope, c.head_dim);
    case StepKind::KRotated:
      return rope_equation("k", c.config.rope, c.head_dim);
    case StepKind::Scores: {
      const bool normed = c.config.qk_norm != QkNorm::None;
      const std::string q = rope ? "\\hat{Q}" : normed ? "\\bar{Q}" : "Q";
      const std::string k = rope ? "\\hat{K}" : normed ? "\\bar{K}" : "K";
      return "S_{%} = " + q + "_{%} " + k + "_{" + kv_sub +
             "}^\\top,\\quad S_{ij} = q_i \\cdot k_j";
    }
    case StepKind::Scaled:
      if (!c.scale) return "\\tilde{S}_{%} = S_{%} \\quad (\\text{scaling off})";
      if (c.config.scale != 0.0) {  // a checkpoint's own factor (Gemma's query_pre_attn_scalar)
        return "\\tilde{S}_{%} = S_{%} \\cdot s,\\quad s = " + number_text(c.config.scale) +
               " \\ (\\text{the model's scale, not } 1/\\sqrt{d_k})";
      }
      return "\\tilde{S}_{%} = \\frac{S_{%}}{\\sqrt{d_k}}" +
             (c.head_dim > 0 ? " = \\frac{S_{%}}{\\sqrt{" + std::to_string(c.head_dim) + "}}"
                             : std::string());
    case StepKind::Capped:
      return "\\hat{S}_{%} = c \\tanh\\left(\\tilde{S}_{%} / c\\right)" +
             (capped ? ",\\quad c = " + number_text(c.config.softcap) : std::string()) +
             " \\quad (\\text{scores bent smoothly into } (-c, c))";
    case StepKind::Alibi: {
      const bool slope = head >= 0 && std::size_t(head) < c.alibi_slopes.size();
      return "B_{%,ij} = -m_{%} |i - j|" +
             (slope ? ",\\quad m_{%} = " + std::to_string(c.alibi_slopes[std::size_t(head)])
                    : std::string());
    }
    case StepKind::Masked:
      return logits + bias_term +
             " + M,\\quad M_{ij} = \\begin{cases} 0 & \\text{visible} \\\\ -\\infty & "
             "\\text{masked} \\end{cases}";
    case StepKind::Weights:
      return "A_{%} = \\operatorname{softmax}_{\\text{row}}\\left(" + logits + bias_term +
             " + M\\right),\\quad A_{ij} = \\frac{e^{x_{ij} - \\max_k x_{ik}}}{\\sum_k "
             "e^{x_{ik} - \\max_k x_{ik}}}";
    case StepKind::Context:
      return "Z_{%} = A_{%} V_{" + kv_sub + "},\\quad z_i = \\sum_j A_{ij} v_j";
    case StepKind::Concat:
      return R"(Z = \operatorname{Concat}(Z_1, \ldots, Z_h) \in \mathbb{R}^{n \times h d_k})";
    case StepKind::Output:
      if (!c.config.out_proj) return "Y = Z";
      return has_out_bias(c.config) ? R"(Y = Z W_O^\top + b_O)" : R"(Y = Z W_O^\top)";
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
  const std::size_t heads = context.config.heads, kv = kv_heads_of(context.config);
  if (step_info(kind).per_kv_head && kv != heads && head >= 0) {
    // "Keys, K/V head 2 (query heads 3–4)"
    const std::size_t group = heads / kv, first = std::size_t(head) * group + 1;
    text.title +=
        ", K/V head " + label + " (query head" +
        (group == 1 ? " " + std::to_string(first)
                    : "s " + std::to_string(first) + "–" + std::to_string(first + group - 1)) +
        ")";
  } else if (step_info(kind).per_head && head >= 0) {
    text.title += ", head " + label;
  }
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
