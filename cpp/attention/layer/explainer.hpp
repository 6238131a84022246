// The Explainer behind explain_cell (explain.cpp): one traced cell's arithmetic as terms, sums
// and quantities. Internal to explain.cpp (scores to the output) and explain_inputs.cpp (the
// inputs, projections, q/k norms and RoPE).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/layer/explain.hpp"
#include "attention/message_text.hpp"
#include "attention/ops/positional.hpp"
#include "attention/ops/rope.hpp"

namespace attn::explain_detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

inline std::string str(std::size_t value) {
  return std::to_string(value);
}

// Plain text: 6 significant digits, "−∞" for a masked score.
inline std::string num(double value) {
  if (std::isinf(value)) return value < 0 ? "−∞" : "∞";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

// LaTeX: like num(), with "1.5 \times 10^{-5}" for exponents and \infty.
inline std::string tex(double value) {
  if (std::isinf(value)) return value < 0 ? "-\\infty" : "\\infty";
  std::string text = num(value);
  const auto e = text.find('e');
  if (e == std::string::npos) return text;
  return text.substr(0, e) + " \\times 10^{" + std::to_string(std::stoi(text.substr(e + 1))) + "}";
}

inline std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// Σ_t left(t)·right(t) with float products (as shown) summed in double, appended as terms.
struct Sum {
  double total = 0.0;      // Σ products
  double magnitude = 0.0;  // Σ |products|
};
template <class Left, class Right>
inline Sum add_terms(std::vector<ExplainTerm>& terms, std::size_t count, Left left, Right right) {
  Sum sum;
  terms.reserve(terms.size() + count);
  for (std::size_t t = 0; t < count; ++t) {
    const float l = left(t);
    const float r = right(t);
    const float product = l * r;
    terms.push_back({t, l, r, product});
    sum.total += product;
    sum.magnitude += std::abs(double(product));
  }
  return sum;
}

// The forward computed `value` from these terms (any summation order, float): it lies within
// the float rounding bound of the double sum unless the weights were replaced since.
inline void require_current_weights(const Sum& sum, double bias, std::size_t count, float value,
                                    const std::string& what) {
  const double expected = sum.total + bias;
  const double bound = (double(count) + 4.0) * 0x1p-23 * (sum.magnitude + std::abs(bias)) + 1e-30;
  if (!(std::abs(expected - double(value)) <= bound)) {
    throw Error("the layer's weights changed since the last traced forward: " + what + " is " +
                num(value) + " in the trace but " + num(expected) +
                " with the current weights; run forward with trace: true again");
  }
}

class Explainer {
 public:
  Explainer(const AttentionLayer& layer, StepKind kind, CellExplanation& out)
      : layer_(layer),
        trace_(layer.last_result().trace),
        kind_(kind),
        out_(out),
        i_(out.row),
        c_(out.col) {}

  void run() {
    switch (kind_) {
      case StepKind::Embedding:
        return embedding();
      case StepKind::Positional:
        return positional();
      case StepKind::Input:
      case StepKind::Source:
        return input();
      case StepKind::Q:
      case StepKind::K:
      case StepKind::V:
        return projection();
      case StepKind::QNormed:
      case StepKind::KNormed:
        return normed();
      case StepKind::QRotated:
      case StepKind::KRotated:
        return rotation();
      case StepKind::Scores:
        return scores();
      case StepKind::Scaled:
        return scaled();
      case StepKind::Capped:
        return capped();
      case StepKind::Alibi:
        return alibi();
      case StepKind::Masked:
        return masked();
      case StepKind::Weights:
        return weights();
      case StepKind::Context:
        return context();
      case StepKind::Concat:
        return concat();
      case StepKind::Output:
        return output();
    }
  }

 private:
  const Step* find(StepKind kind, int head) const {
    for (const auto& step : trace_.steps) {
      if (step.kind == kind && step.head == head) return &step;
    }
    return nullptr;
  }
  const Step& need(StepKind kind, int head) const {
    const Step* step = find(kind, head);
    if (!step) {
      throw Error("explaining '" + out_.step + "' needs the '" + step_id(kind) + "' step" +
                  (head >= 0 ? " of head " + str(std::size_t(head) + 1) : "") +
                  ", which the last trace lacks; run forward with trace: true again");
    }
    return *step;
  }
  static float at(const Step& step, std::size_t r, std::size_t c) {
    return step.data[r * step.shape[1] + c];
  }
  float value_at(StepKind kind, int head, std::size_t r, std::size_t c) const {
    return at(need(kind, head), r, c);
  }
  std::size_t heads() const { return layer_.config().heads; }
  std::size_t kv_heads() const { return layer_.kv_heads(); }
  bool grouped() const { return kv_heads() != heads(); }
  std::size_t dk() const { return layer_.head_dim(); }
  std::size_t d_model() const { return layer_.config().d_model; }
  bool rope() const { return layer_.config().positional == PositionalKind::Rope; }
  bool qk_norm() const { return layer_.config().qk_norm != QkNorm::None; }
  // The queries and keys the scores read: rotated, else normalised, else as projected.
  StepKind q_kind() const {
    return rope() ? StepKind::QRotated : qk_norm() ? StepKind::QNormed : StepKind::Q;
  }
  StepKind k_kind() const {
    return rope() ? StepKind::KRotated : qk_norm() ? StepKind::KNormed : StepKind::K;
  }
  // The key/value head this cell's head reads (its own for k, v, k_rotated).
  int kv_head() const { return out_.kv_head; }
  // "heads 3–4" (1-based): the query heads that read key/value head g.
  std::string group_text(std::size_t g) const {
    const std::size_t size = layer_.group_size(), first = g * size + 1;
    return size == 1 ? "head " + str(first) : "heads " + str(first) + "–" + str(first + size - 1);
  }
  // "K/V head 2 of 2 (0-based 1), shared by heads 3–4"
  std::string kv_text(std::size_t g) const {
    return "K/V head " + str(g + 1) + " of " + str(kv_heads()) + " (0-based " + str(g) +
           "), shared by " + group_text(g);
  }
  std::string head_text() const {
    if (step_info(kind_).per_kv_head && grouped()) {
      return "K/V head " + str(std::size_t(out_.head) + 1) + " of " + str(kv_heads()) +
             ", read by query " + group_text(std::size_t(out_.head));
    }
    return "head " + str(std::size_t(out_.head) + 1) + " of " + str(heads());
  }
  // For a query head's step that reads K or V: "head 4 of 4, which reads K/V head 2 of 2 …".
  std::string reading_head_text() const {
    if (!grouped()) return head_text();
    return head_text() + ", which reads " + kv_text(std::size_t(kv_head()));
  }
  void kv_head_quantity() {
    if (grouped()) {
      quantity("key/value head (0-based)", "g = \\lfloor h / (H / H_{kv}) \\rfloor",
               double(kv_head()));
    }
  }
  std::string ij() const { return str(i_) + "," + str(c_); }  // "2,3" for subscripts
  void quantity(std::string name, std::string latex, double value) {
    out_.quantities.push_back({std::move(name), std::move(latex), value});
  }

  // ---- inputs ----------------------------------------------------------------------------

  void embedding();

  // PE[pos][c] exactly as the forward added it.
  float positional_value(std::size_t pos, std::size_t c) const;
  void positional();

  void input();

  // ---- projections and RoPE --------------------------------------------------------------

  void projection();

  // RMSNorm of q or k before RoPE: the head's d_k values (or the row's values of every head:
  // the whole projection) as terms x_t · x_t, their mean and rms, and the norm's weight.
  void normed();

  void rotation();

  // ---- one head: scores to context -------------------------------------------------------

  void scores();

  void scaled();

  void capped();

  void alibi();

  void masked();

  void weights();

  void context();

  // ---- heads together ----------------------------------------------------------------------

  void concat();

  void output();

  const AttentionLayer& layer_;
  const Trace& trace_;
  StepKind kind_;
  CellExplanation& out_;
  std::size_t i_, c_;
};

}  // namespace attn::explain_detail
