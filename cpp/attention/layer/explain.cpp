// The arithmetic behind one cell of a traced forward (see explain.hpp).
#include "attention/layer/explain.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "attention/layer/explainer.hpp"

namespace attn {

namespace explain_detail {

void Explainer::scores() {
  const Step& q = need(q_kind(), out_.head);
  const Step& k = need(k_kind(), kv_head());                  // its group's
  const std::string hat = rope() ? "̂" : qk_norm() ? "̄" : "";  // rotated, normalised
  out_.left_label = "q" + hat + "_" + str(i_) + "[t]";
  out_.right_label = "k" + hat + "_" + str(c_) + "[t]";
  add_terms(
      out_.terms, dk(), [&](std::size_t t) { return at(q, i_, t); },
      [&](std::size_t t) { return at(k, c_, t); });
  out_.summary = "score = q" + hat + "_" + str(i_) + " · k" + hat + "_" + str(c_) + " = Σ_t " +
                 out_.left_label + "·" + out_.right_label + " over d_k = " + str(dk()) +
                 " terms = " + num(out_.value) + " (" + reading_head_text() +
                 (qk_norm() ? "; q and k normalised by q_norm and k_norm" : "") +
                 (rope() ? "; q and k rotated by RoPE" : "") + ")";
  const std::string mark = rope() ? "\\hat" : qk_norm() ? "\\bar" : "";
  const std::string qs = mark.empty() ? "q" : mark + "{q}";
  const std::string ks = mark.empty() ? "k" : mark + "{k}";
  out_.equation = "S_{" + ij() + "} = \\sum_{t=0}^{" + str(dk() - 1) + "} " + qs + "_{" + str(i_) +
                  ",t}\\, " + ks + "_{" + str(c_) + ",t} = " + tex(out_.value) +
                  (grouped() ? ",\\quad k \\text{ of K/V head } " + str(kv_head() + 1) : "");
  kv_head_quantity();
}

void Explainer::scaled() {
  const float s = value_at(StepKind::Scores, out_.head, i_, c_);
  const bool on = layer_.last_result().options.scale;  // as the forward ran
  const float scale = score_scale(layer_.config(), dk(), on);
  if (on && layer_.config().scale != 0.0) {  // the checkpoint's own factor
    out_.summary = "scaled score = S_" + str(i_) + "," + str(c_) + " · s = " + num(s) + " · " +
                   num(scale) + " = " + num(out_.value) +
                   " (s is the model's own scale, e.g. Gemma's query_pre_attn_scalar^(−1/2), "
                   "not 1/√d_k = 1/√" +
                   str(dk()) + "; " + head_text() + ")";
    out_.equation = "\\tilde{S}_{" + ij() + "} = S_{" + ij() + "} \\cdot s = " + tex(s) +
                    " \\cdot " + tex(scale) + " = " + tex(out_.value);
    quantity("score", "S_{" + ij() + "}", s);
    quantity("scale", "s", scale);
    return;
  }
  out_.summary =
      "scaled score = S_" + str(i_) + "," + str(c_) + " · " +
      (on ? "1/√d_k = " + num(s) + " · 1/√" + str(dk()) + " = " + num(s) + " · " + num(scale)
          : "1 (scaling off) = " + num(s)) +
      " = " + num(out_.value) + " (" + head_text() + ")";
  out_.equation = "\\tilde{S}_{" + ij() + "} = " +
                  (on ? "\\frac{S_{" + ij() + "}}{\\sqrt{" + str(dk()) + "}} = \\frac{" + tex(s) +
                            "}{\\sqrt{" + str(dk()) + "}}"
                      : "S_{" + ij() + "} \\quad (\\text{scaling off})") +
                  " = " + tex(out_.value);
  quantity("score", "S_{" + ij() + "}", s);
  quantity("scale",
           on ? "1/\\sqrt{d_k} = 1/\\sqrt{" + str(dk()) + "}" : "1 \\ (\\text{scaling off})",
           scale);
}

void Explainer::capped() {
  const float s = value_at(StepKind::Scaled, out_.head, i_, c_);
  const double cap = layer_.config().softcap;
  const double ratio = double(s) / cap, t = std::tanh(ratio);
  out_.summary = "soft-capped score = c · tanh(S̃ / c) = " + num(cap) + " · tanh(" + num(s) + " / " +
                 num(cap) + ") = " + num(cap) + " · " + num(t) + " = " + num(out_.value) +
                 ": near S̃ while |S̃| is small against c, never beyond ±" + num(cap) + " (" +
                 head_text() + ")";
  out_.equation = "\\hat{S}_{" + ij() + "} = c \\tanh(\\tilde{S}_{" + ij() +
                  "} / c) = " + tex(cap) + " \\tanh(" + tex(s) + " / " + tex(cap) +
                  ") = " + tex(out_.value);
  quantity("scaled score", "\\tilde{S}_{" + ij() + "}", s);
  quantity("cap", "c", cap);
  quantity("tanh", "\\tanh(\\tilde{S}_{" + ij() + "} / c)", t);
}

void Explainer::alibi() {
  const float slope = layer_.alibi_slopes()[std::size_t(out_.head)];
  const std::size_t distance = i_ > c_ ? i_ - c_ : c_ - i_;
  out_.summary = "ALiBi bias = −m·|i − j| = −" + num(slope) + " · |" + str(i_) + " − " + str(c_) +
                 "| = " + num(out_.value) + ": farther keys get a larger penalty (slope m of " +
                 head_text() + ")";
  out_.equation = "B_{" + ij() + "} = -m_{" + str(std::size_t(out_.head) + 1) + "} |" + str(i_) +
                  " - " + str(c_) + "| = -" + tex(slope) + " \\cdot " + str(distance) + " = " +
                  tex(out_.value);
  quantity("slope", "m_{" + str(std::size_t(out_.head) + 1) + "}", slope);
  quantity("distance", "|i - j|", double(distance));
}

void Explainer::masked() {
  const bool capped = find(StepKind::Capped, out_.head) != nullptr;
  const float s = value_at(capped ? StepKind::Capped : StepKind::Scaled, out_.head, i_, c_);
  const std::string score = capped ? "soft-capped score" : "scaled score";
  const std::string s_tex = (capped ? "\\hat{S}_{" : "\\tilde{S}_{") + ij() + "}";
  const Step* bias_step = find(StepKind::Alibi, out_.head);
  const double bias = bias_step ? double(at(*bias_step, i_, c_)) : 0.0;
  const bool visible = std::isfinite(out_.value);
  const std::string biased = bias_step ? " + ALiBi bias " + num(bias) : "";
  out_.summary = visible ? "visible: query " + str(i_) + " may see key " + str(c_) +
                               ", so the mask adds 0: masked = " + score + " " + num(s) + biased +
                               " + 0 = " + num(out_.value) + " (" + head_text() + ")"
                         : "masked: key " + str(c_) + " is hidden from query " + str(i_) +
                               ", so the score becomes −∞ and its weight will be exactly 0 (" +
                               head_text() + ")";
  const std::string b_tex = bias_step ? " + B_{" + ij() + "}" : "";
  out_.equation = s_tex + b_tex + " + M_{" + ij() + "} = " + tex(s) +
                  (bias_step ? (bias < 0 ? " - " + tex(-bias) : " + " + tex(bias)) : "") +
                  (visible ? " + 0" : " - \\infty") + " = " + tex(out_.value);
  quantity(score, s_tex, s);
  if (bias_step) quantity("ALiBi bias", "B_{" + ij() + "}", bias);
  quantity(visible ? "mask (visible)" : "mask (masked)", "M_{" + ij() + "}", visible ? 0.0 : -kInf);
}

void Explainer::weights() {
  const Step& x = need(StepKind::Masked, out_.head);
  const std::size_t keys = x.shape[1];
  const float x_ij = at(x, i_, c_);
  double max = -kInf;
  std::size_t visible = 0;
  for (std::size_t k = 0; k < keys; ++k) {
    const float v = at(x, i_, k);
    if (std::isfinite(v)) {
      max = std::max(max, double(v));
      ++visible;
    }
  }
  const std::string x_tex = "x_{" + ij() + "}";
  quantity("masked score", x_tex, x_ij);
  if (visible == 0) {
    out_.summary = "every key is masked for query " + str(i_) +
                   ": softmax would divide 0 by 0, so the whole row of weights is 0 (never "
                   "NaN) and the query's context is 0 (" +
                   head_text() + ")";
    out_.equation = "A_{" + ij() + "} = 0 \\quad (\\text{every key of row " + str(i_) + " masked})";
    quantity("visible keys", "\\#\\{k : M_{" + str(i_) + ",k} = 0\\}", 0.0);
    return;
  }
  std::vector<double> exps(keys);
  double sum = 0.0;
  for (std::size_t k = 0; k < keys; ++k) {
    exps[k] = std::exp(double(at(x, i_, k)) - max);  // e^{-inf} = 0 for masked keys
    sum += exps[k];
  }
  const float inverse = float(1.0 / sum);
  add_terms(
      out_.terms, keys, [&](std::size_t k) { return float(exps[k]); },
      [&](std::size_t) { return inverse; });
  out_.left_label = "e^(x_" + str(i_) + "," + "k − max)";
  out_.right_label = "1 / Σ";
  const double shifted = double(x_ij) - max;
  const double e = exps[c_];
  out_.summary =
      "softmax over row " + str(i_) + " (" + str(visible) + " of " + str(keys) +
      " keys visible): A = e^(x − max) / Σ_k e^(x_k − max) = " +
      (std::isfinite(x_ij) ? "e^(" + num(x_ij) + " − " + num(max) + ") / " + num(sum) + " = " +
                                 num(e) + " / " + num(sum)
                           : "0 / " + num(sum) + " (key " + str(c_) + " is masked: e^−∞ = 0)") +
      " = " + num(out_.value) + " (" + head_text() + ")";
  out_.equation = "A_{" + ij() + "} = \\frac{e^{" + x_tex + " - \\max_k x_{" + str(i_) +
                  ",k}}}{\\sum_k e^{x_{" + str(i_) + ",k} - \\max_k x_{" + str(i_) +
                  ",k}}} = \\frac{" + tex(e) + "}{" + tex(sum) + "} = " + tex(out_.value);
  quantity("row max", "\\max_k x_{" + str(i_) + ",k}", max);
  quantity("shifted", x_tex + " - \\max", shifted);
  quantity("exp", "e^{" + x_tex + " - \\max}", e);
  quantity("row sum", "\\sum_k e^{x_{" + str(i_) + ",k} - \\max}", sum);
}

void Explainer::context() {
  const Step& a = need(StepKind::Weights, out_.head);
  const Step& v = need(StepKind::V, kv_head());  // its group's values
  const std::size_t keys = a.shape[1];
  out_.left_label = "A_" + str(i_) + "[j]";
  out_.right_label = "v_j[" + str(c_) + "]";
  add_terms(
      out_.terms, keys, [&](std::size_t j) { return at(a, i_, j); },
      [&](std::size_t j) { return at(v, j, c_); });
  out_.summary = "context = Σ_j A_" + str(i_) + "[j]·v_j[" + str(c_) + "] over " + str(keys) +
                 " keys (masked keys have weight 0) = " + num(out_.value) + " (" +
                 reading_head_text() + ")";
  out_.equation = "z_{" + ij() + "} = \\sum_{j=0}^{" + str(keys - 1) + "} A_{" + str(i_) +
                  ",j}\\, v_{j," + str(c_) + "} = " + tex(out_.value) +
                  (grouped() ? ",\\quad v \\text{ of K/V head } " + str(kv_head() + 1) : "");
  kv_head_quantity();
}

void Explainer::concat() {
  const std::size_t head = c_ / dk(), within = c_ % dk();
  const float z = value_at(StepKind::Context, int(head), i_, within);
  out_.summary = "concatenation: column " + str(c_) + " is column " + str(within) + " of head " +
                 str(head + 1) + "'s context (head index ⌊" + str(c_) + " / " + str(dk()) +
                 "⌋ = " + str(head) + " from 0) = " + num(out_.value);
  out_.equation = "Z_{" + ij() + "} = (Z_{" + str(head + 1) + "})_{" + str(i_) + "," + str(within) +
                  "} = " + tex(out_.value);
  quantity("head index (0-based)", "\\lfloor c / d_k \\rfloor", double(head));
  quantity("column in head", "c \\bmod d_k", double(within));
  quantity("context value", "(Z_{" + str(head + 1) + "})_{" + str(i_) + "," + str(within) + "}", z);
}

void Explainer::output() {
  const Step& z = need(StepKind::Concat, -1);
  if (!layer_.config().out_proj) {
    const float value = at(z, i_, c_);
    out_.summary = "no output projection (outProj: false): output = concat[" + str(i_) + "][" +
                   str(c_) + "] = " + num(value);
    out_.equation = "Y_{" + ij() + "} = Z_{" + ij() + "} = " + tex(out_.value);
    quantity("concat", "Z_{" + ij() + "}", value);
    return;
  }
  const std::size_t inner = layer_.inner_dim();
  const LayerWeightsView w = layer_.weight_view();
  const float* weight_row = w.out_proj_weight.data() + c_ * inner;
  out_.left_label = "z_" + str(i_) + "[t]";
  out_.right_label = "W_O[" + str(c_) + "][t]";
  const Sum sum = add_terms(
      out_.terms, inner, [&](std::size_t t) { return at(z, i_, t); },
      [&](std::size_t t) { return weight_row[t]; });
  const bool bias = has_out_bias(layer_.config());
  const double b = bias ? double(w.out_proj_bias[c_]) : 0.0;
  require_current_weights(sum, b, inner, out_.value, "output[" + str(i_) + "][" + str(c_) + "]");
  out_.summary = "output = concat row " + str(i_) + " · W_O row " + str(c_) +
                 " (out_proj.weight row " + str(c_) + "): Σ_t z_" + str(i_) + "[t]·W_O[" + str(c_) +
                 "][t] over " + str(inner) + " terms = " + num(sum.total) +
                 (bias ? " plus bias b_O[" + str(c_) + "] = " + num(b) : "") + " → " +
                 num(out_.value);
  const std::string w_tex = "(W_O)_{" + str(c_) + ",t}";
  const std::string b_tex = "(b_O)_{" + str(c_) + "}";
  out_.equation = "y_{" + ij() + "} = \\sum_{t=0}^{" + str(inner - 1) + "} z_{" + str(i_) +
                  ",t}\\, " + w_tex + (bias ? " + " + b_tex : "") + " = " + tex(out_.value);
  quantity("sum of products", "\\sum_t z_{" + str(i_) + ",t}\\, " + w_tex, sum.total);
  if (bias) quantity("bias", b_tex, b);
}

}  // namespace explain_detail

using namespace explain_detail;  // this file's own helpers (str, the Explainer)

CellExplanation explain_cell(const AttentionLayer& layer, const std::string& step, int head,
                             std::size_t row, std::size_t col) {
  const Trace& trace = layer.last_result().trace;
  if (trace.steps.empty()) throw Error("explain needs a forward with trace: true first");

  std::vector<std::string> ids;  // present, in walkthrough order
  bool present = false;
  for (const auto& s : trace.steps) {
    if (ids.empty() || ids.back() != s.id()) ids.push_back(s.id());
    present = present || s.id() == step;
  }
  const std::optional<StepKind> kind = find_step_kind(step);
  if (!kind) throw Error("unknown step '" + step + "'; the last trace has: " + join(ids));
  if (!present) {
    throw Error("step '" + step + "' is not in the last trace (it appears with " +
                condition_text(step_info(*kind).appears) + "); the last trace has: " + join(ids));
  }

  // Per key/value head steps (k, v, k_rotated) count key/value heads.
  const bool per_kv = step_info(*kind).per_kv_head;
  const bool grouped = layer.kv_heads() != layer.config().heads;
  const std::size_t heads = per_kv ? layer.kv_heads() : layer.config().heads;
  const std::string head_range =
      "0 to " + str(heads - 1) + " (0-based; " + str(heads) +
      (per_kv && grouped
           ? (heads == 1 ? " key/value head, shared by " : " key/value heads, shared by ") +
                 str(layer.config().heads) + " query heads)"
           : (heads == 1 ? " head)" : " heads)"));
  const bool per_head = step_info(*kind).per_head;
  if (per_head && head == -1) {
    throw Error("step '" + step + "' has one grid per head: pass head " + head_range);
  }
  if (per_head && (head < 0 || std::size_t(head) >= heads)) {
    throw Error("head " + std::to_string(head) + " is out of range for step '" + step +
                "': expected " + head_range);
  }
  if (!per_head && head != -1) {
    throw Error("step '" + step + "' is shared by all heads: head must be -1 (or omitted), got " +
                std::to_string(head));
  }
  const Step* cell_step = nullptr;
  for (const auto& s : trace.steps) {
    if (s.kind == *kind && s.head == head) cell_step = &s;
  }
  if (cell_step == nullptr) {
    throw Error("the last trace has no '" + step + "' step for head " + std::to_string(head));
  }
  const std::size_t rows = cell_step->shape[0], cols = cell_step->shape[1];
  const std::string shape = "shape [" + str(rows) + ", " + str(cols) + "]";
  if (row >= rows) {
    throw Error("row " + str(row) + " is out of range for step '" + step + "' (" + shape +
                ", a row per " + step_info(*kind).rows + "): expected 0 to " + str(rows - 1));
  }
  if (col >= cols) {
    throw Error("col " + str(col) + " is out of range for step '" + step + "' (" + shape +
                ", a column per " + step_info(*kind).cols + "): expected 0 to " + str(cols - 1));
  }

  CellExplanation out;
  out.step = step;
  out.head = head;
  out.row = row;
  out.col = col;
  out.value = cell_step->data[row * cols + col];
  out.kv_head = cell_step->kv_head;
  Explainer(layer, *kind, out).run();
  return out;
}

}  // namespace attn
