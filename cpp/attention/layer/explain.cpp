// The arithmetic behind one cell of a traced forward (see explain.hpp).
#include "attention/layer/explain.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/message_text.hpp"
#include "attention/ops/positional.hpp"
#include "attention/ops/rope.hpp"

namespace attn {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string str(std::size_t value) {
  return std::to_string(value);
}

// Plain text: 6 significant digits, "−∞" for a masked score.
std::string num(double value) {
  if (std::isinf(value)) return value < 0 ? "−∞" : "∞";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

// LaTeX: like num(), with "1.5 \times 10^{-5}" for exponents and \infty.
std::string tex(double value) {
  if (std::isinf(value)) return value < 0 ? "-\\infty" : "\\infty";
  std::string text = num(value);
  const auto e = text.find('e');
  if (e == std::string::npos) return text;
  return text.substr(0, e) + " \\times 10^{" + std::to_string(std::stoi(text.substr(e + 1))) + "}";
}

std::string join(const std::vector<std::string>& items) {
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
Sum add_terms(std::vector<ExplainTerm>& terms, std::size_t count, Left left, Right right) {
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
void require_current_weights(const Sum& sum, double bias, std::size_t count, float value,
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

  void embedding() {
    out_.summary = "token embedding X[" + str(i_) + "][" + str(c_) + "] = " + num(out_.value) +
                   ": a lookup, nothing is computed (row " + str(i_) +
                   " is the embedding of token " + str(i_) +
                   " as given to forward; layer.embed(ids) looks rows up in the seeded table)";
    out_.equation = "X_{" + ij() + "} = " + tex(out_.value);
  }

  // PE[pos][c] exactly as the forward added it.
  float positional_value(std::size_t pos, std::size_t c) const {
    if (const Step* table = find(StepKind::Positional, -1); table && pos < table->shape[0]) {
      return at(*table, pos, c);
    }
    if (layer_.config().positional == PositionalKind::Sinusoidal) {
      const double angle = sinusoid_angle(pos, c, d_model());
      return float(c % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
    // learned: the table is generated row after row (row pos does not depend on the length),
    // so a view whose rows all alias one buffer ends up holding row pos, in O(d_model) memory.
    std::vector<float> row(d_model());
    learned_encoding(MatView(row.data(), pos + 1, d_model(), 0), layer_.config().seed);
    return row[c];
  }
  void positional() {
    const std::size_t pos = i_, c = c_;
    if (layer_.config().positional == PositionalKind::Learned) {
      out_.summary = "learned positional embedding PE[" + str(pos) + "][" + str(c) +
                     "] = " + num(out_.value) + ": a lookup in row " + str(pos) +
                     " of a seeded table (N(0, 0.5²) per entry), nothing is computed";
      out_.equation = "PE_{" + ij() + "} = P_{" + ij() + "} = " + tex(out_.value);
      quantity("position", "pos", double(pos));
      quantity("dimension", "c", double(c));
      return;
    }
    const std::size_t pair = c / 2;
    const double denominator = sinusoid_denominator(pair, d_model());
    const double angle = sinusoid_angle(pos, c, d_model());
    const bool even = c % 2 == 0;
    const std::string fn = even ? "sin" : "cos";
    out_.summary = "sinusoidal encoding: dimension " + str(c) + " is the " + fn +
                   " of pair i = " + str(pair) + ": PE[" + str(pos) + "][" + str(c) + "] = " + fn +
                   "(" + str(pos) + " / 10000^(" + str(2 * pair) + "/" + str(d_model()) +
                   ")) = " + fn + "(" + num(angle) + ") = " + num(out_.value);
    out_.equation = "PE_{(" + ij() + ")} = \\" + fn + "\\left(\\frac{" + str(pos) + "}{10000^{" +
                    str(2 * pair) + "/" + str(d_model()) + "}}\\right) = \\" + fn + "(" +
                    tex(angle) + ") = " + tex(out_.value);
    quantity("position", "pos", double(pos));
    quantity("dimension", "c", double(c));
    quantity("pair index", "i = \\lfloor c / 2 \\rfloor", double(pair));
    quantity("denominator", "10000^{2i/d_{model}}", denominator);
    quantity("angle", "pos / 10000^{2i/d_{model}}", angle);
  }

  void input() {
    const bool source = kind_ == StepKind::Source;
    const auto kind = layer_.config().positional;
    const bool additive = is_additive(kind);
    const std::string kind_name = positional_kind_name(kind);
    const std::string x = source ? "kv" : "X";
    const std::string x_tex = source ? "X^{src}" : "X";
    if (!additive) {
      const std::string why = kind == PositionalKind::Rope ? " (RoPE rotates q and k later instead)"
                              : kind == PositionalKind::Alibi
                                  ? " (ALiBi adds a distance bias to the scores later instead)"
                                  : "";
      out_.summary = std::string(source ? "cross-attention source" : "input") +
                     " = the token embedding as given, no additive positional encoding" + why +
                     ": " + x + "[" + str(i_) + "][" + str(c_) + "] = " + num(out_.value);
      out_.equation =
          x_tex + "_{in," + ij() + "} = " + x_tex + "_{" + ij() + "} = " + tex(out_.value);
      if (!source) {
        quantity("embedding", "X_{" + ij() + "}", value_at(StepKind::Embedding, -1, i_, c_));
      }
      return;
    }
    const float pe = positional_value(i_, c_);
    const double raw = source ? double(out_.value) - double(pe)
                              : double(value_at(StepKind::Embedding, -1, i_, c_));
    out_.summary =
        std::string(source ? "cross-attention source" : "input") + " = token embedding + " +
        kind_name + " positional encoding: " + num(raw) + " + " + num(pe) + " = " +
        num(out_.value) +
        (source ? " (kv itself is not in the trace: shown as the value minus PE; the source's "
                  "positions count from 0 too)"
                : "");
    out_.equation = x_tex + "_{in," + ij() + "} = " + x_tex + "_{" + ij() + "} + PE_{" + ij() +
                    "} = " + tex(raw) + " + " + tex(pe) + " = " + tex(out_.value);
    quantity(source ? "source token (value − PE)" : "embedding", x_tex + "_{" + ij() + "}", raw);
    quantity("positional encoding", "PE_{" + ij() + "}", pe);
  }

  // ---- projections and RoPE --------------------------------------------------------------

  void projection() {
    const std::string& id = out_.step;
    const std::size_t which = kind_ == StepKind::Q ? 0 : kind_ == StepKind::K ? 1 : 2;
    const std::string M = which == 0 ? "Q" : which == 1 ? "K" : "V";
    const bool from_source = which != 0 && find(StepKind::Source, -1) != nullptr;
    const Step& x_in = need(from_source ? StepKind::Source : StepKind::Input, -1);
    const std::size_t d = d_model();
    const std::size_t r = std::size_t(out_.head) * dk() + c_;  // row of W_M (K, V: of W_K, W_V)
    // W_Q's inner rows, then W_K's and W_V's kv_inner rows each.
    const std::size_t w_row =
        (which == 0 ? 0 : layer_.inner_dim() + (which - 1) * layer_.kv_inner_dim()) + r;
    const LayerWeightsView w = layer_.weight_view();
    const float* weight_row = w.in_proj_weight.data() + w_row * d;
    const std::string x_sym = from_source ? "x^{src}" : "x";
    out_.left_label = (from_source ? "src_" : "x_") + str(i_) + "[t]";
    out_.right_label = "W_" + M + "[" + str(r) + "][t]";
    const Sum sum = add_terms(
        out_.terms, d, [&](std::size_t t) { return at(x_in, i_, t); },
        [&](std::size_t t) { return weight_row[t]; });
    const bool bias = layer_.config().bias;
    const double b = bias ? double(w.in_proj_bias[w_row]) : 0.0;
    const std::string row_text =
        "W_" + M + " row " + str(r) + " = in_proj_weight row " + str(w_row);
    require_current_weights(sum, b, d, out_.value, id + "[" + str(i_) + "][" + str(c_) + "]");
    out_.summary = id + " = " + (from_source ? "source row " : "input row ") + str(i_) + " · " +
                   row_text + ": Σ_t " + out_.left_label + "·" + out_.right_label +
                   " over d_model = " + str(d) + " terms = " + num(sum.total) +
                   (bias ? " plus bias b_" + M + "[" + str(r) + "] = " + num(b) : "") + " → " +
                   num(out_.value) + " (" + head_text() + ", column " + str(c_) +
                   " of its d_k = " + str(dk()) + ")";
    const std::string w_tex = "(W_" + M + ")_{" + str(r) + ",t}";
    const std::string b_tex = "(b_" + M + ")_{" + str(r) + "}";
    out_.equation = id + "_{" + ij() + "} = \\sum_{t=0}^{" + str(d - 1) + "} " + x_sym + "_{" +
                    str(i_) + ",t}\\, " + w_tex + (bias ? " + " + b_tex : "") + " = " +
                    tex(out_.value);
    quantity("sum of products", "\\sum_t " + x_sym + "_{" + str(i_) + ",t}\\, " + w_tex, sum.total);
    if (bias) quantity("bias", b_tex, b);
  }

  // RMSNorm of q or k before RoPE: the head's d_k values (or the row's values of every head:
  // the whole projection) as terms x_t · x_t, their mean and rms, and the norm's weight.
  void normed() {
    const bool is_q = kind_ == StepKind::QNormed;
    const std::string v = is_q ? "q" : "k";
    const StepKind raw_kind = is_q ? StepKind::Q : StepKind::K;
    const LayerConfig& config = layer_.config();
    const bool whole = config.qk_norm == QkNorm::Whole;
    const std::size_t heads = is_q ? layer_.config().heads : kv_heads();
    const std::size_t head = std::size_t(out_.head), width = whole ? heads * dk() : dk();
    // The row's values the norm reads, head by head (every head's step for a whole-projection
    // norm: the trace must hold them all).
    std::vector<float> row(width);
    for (std::size_t h = whole ? 0 : head; h < (whole ? heads : head + 1); ++h) {
      const Step* step = find(raw_kind, int(h));
      if (step == nullptr) {
        throw Error("explaining '" + out_.step + "' needs every head's '" + step_id(raw_kind) +
                    "' step (this model's " + v +
                    "_norm spans every head at once), which the "
                    "last trace lacks: trace every head (traceHead -1)");
      }
      for (std::size_t t = 0; t < dk(); ++t) row[(whole ? h * dk() : 0) + t] = at(*step, i_, t);
    }
    const std::size_t index = (whole ? head * dk() : 0) + c_;  // this cell in the norm's row
    out_.left_label = v + "_" + str(i_) + "[t]";
    out_.right_label = v + "_" + str(i_) + "[t]";
    const Sum squares = add_terms(
        out_.terms, width, [&](std::size_t t) { return row[t]; },
        [&](std::size_t t) { return row[t]; });
    const double eps = config.qk_norm_eps;
    const double rms = std::sqrt(squares.total / double(width) + eps);
    const LayerWeightsView w = layer_.weight_view();
    const float weight = (is_q ? w.q_norm : w.k_norm)[index];
    const bool one_plus = config.qk_norm_weight == RmsNormWeight::OnePlus;
    const double factor = one_plus ? 1.0 + double(weight) : double(weight);
    const float x = row[index];
    const std::string w_text = one_plus ? "(1 + w[" + str(index) + "])" : "w[" + str(index) + "]";
    out_.summary = v + "_norm (RMSNorm) of " +
                   (whole ? "the whole row of " + str(heads) + " heads · " + str(dk()) + " = " +
                                str(width) + " values (before the head split)"
                          : "the head's " + str(dk()) + " values") +
                   ": " + v + "̄[" + str(c_) + "] = " + v + "[" + str(c_) + "] / rms · " + w_text +
                   " = " + num(x) + " / " + num(rms) + " · " + num(factor) + " = " +
                   num(out_.value) + ", rms = √(Σ " + v + "² / " + str(width) + " + ε) (" +
                   head_text() + ")";
    const std::string w_tex = one_plus ? "(1 + w_{" + str(index) + "})" : "w_{" + str(index) + "}";
    out_.equation = "\\bar{" + v + "}_{" + ij() + "} = \\frac{" + v + "_{" + ij() +
                    "}}{\\sqrt{\\tfrac{1}{" + str(width) + "}\\sum_t " + v + "_{" + str(i_) +
                    ",t}^2 + \\varepsilon}}\\, " + w_tex + " = \\frac{" + tex(x) + "}{" + tex(rms) +
                    "} \\cdot " + tex(factor) + " = " + tex(out_.value);
    quantity(v + "[" + str(c_) + "]", v + "_{" + ij() + "}", x);
    quantity("sum of squares", "\\sum_t " + v + "_{" + str(i_) + ",t}^2", squares.total);
    quantity("rms",
             "\\sqrt{\\tfrac{1}{" + str(width) + "}\\sum_t " + v + "_{" + str(i_) +
                 ",t}^2 + \\varepsilon}",
             rms);
    quantity("weight", w_tex, factor);
  }

  void rotation() {
    const bool is_q = kind_ == StepKind::QRotated;
    const std::string v = is_q ? "q" : "k";
    const Step& raw = need(is_q ? (qk_norm() ? StepKind::QNormed : StepKind::Q)
                                : (qk_norm() ? StepKind::KNormed : StepKind::K),
                           out_.head);
    // The layer's RoPE: pair p is (2p, 2p+1) (interleaved) or (p, p + d_k/2) (rotate_half),
    // turned by pos·θ_p with θ_p = base^(−2p/d_k) or the checkpoint's rescaled θ_p.
    const RopeSpec& spec = layer_.config().rope;
    const bool half = spec.pairing == RopePairing::RotateHalf;
    // A partial rotary turns the first r columns as a head r wide; the rest pass through.
    const std::size_t r = spec.rotated(dk());
    if (c_ >= r) {
      const float unchanged = at(raw, i_, c_);
      out_.summary = "RoPE turns only the first " + str(r) + " of the " + str(dk()) +
                     " dimensions of each head (a partial rotary); dimension " + str(c_) +
                     " passes through: " + v + "̂[" + str(c_) + "] = " + v + "[" + str(c_) +
                     "] = " + num(out_.value) + " (" + head_text() + ")";
      out_.equation = "\\hat{" + v + "}_{" + ij() + "} = " + v + "_{" + ij() +
                      "} = " + tex(out_.value) + " \\quad (c \\ge r = " + str(r) + ")";
      quantity(v + "[" + str(c_) + "]", v + "_{" + ij() + "}", unchanged);
      quantity("rotary dims", "r", double(r));
      return;
    }
    const std::size_t pos = i_, pair = half ? c_ % (r / 2) : c_ / 2;
    const std::size_t first = rope_first(pair, spec.pairing);
    const std::size_t second = rope_second(pair, r, spec.pairing);
    const double theta = spec.frequency(pair, r);
    const double angle = static_cast<double>(pos) * theta;  // as RopeTables computes it
    const float cos_a = float(std::cos(angle));
    const float sin_a = float(std::sin(angle));
    const float a = at(raw, i_, first), b = at(raw, i_, second);
    const bool even = c_ == first;  // the pair's first: a·cos − b·sin; second: a·sin + b·cos
    const float ra = even ? cos_a : sin_a;
    const float rb = even ? -sin_a : cos_a;
    out_.terms.push_back({first, a, ra, a * ra});
    out_.terms.push_back({second, b, rb, b * rb});
    out_.left_label = v + "_" + str(i_) + "[t]";
    out_.right_label = "R_" + str(pos) + "[" + str(c_) + "][t]";  // row c of the rotation
    const std::string p0 = str(first), p1 = str(second), two_p = str(2 * pair);
    const std::string base = whole_number_text(spec.base);
    const bool scaled = !spec.frequencies.empty();
    const std::string width = r == dk() ? "d_k" : "r";  // θ's exponent: over the rotated width
    const std::string theta_text = scaled ? "θ_i rescaled from " + base + "^(−2i/" + width +
                                                ") as the checkpoint's rope_scaling says"
                                          : "θ_i = " + base + "^(−2i/" + width + ")";
    out_.summary = std::string(half ? "RoPE (rotate_half) pairs dimension i with i + d_k/2: ("
                                    : "RoPE rotates adjacent dimensions as pairs: (") +
                   p0 + ", " + p1 + ") of " + v + "_" + str(i_) + " turn by angle pos·θ_" +
                   str(pair) + " = " + str(pos) + " · " + num(theta) + " = " + num(angle) + " (" +
                   theta_text + "), so " + v + "̂[" + str(c_) + "] = " +
                   (even ? v + "[" + p0 + "]·cos − " + v + "[" + p1 + "]·sin"
                         : v + "[" + p0 + "]·sin + " + v + "[" + p1 + "]·cos") +
                   " = " + num(out_.value) + " (" + head_text() + ")";
    const std::string hat = "\\hat{" + v + "}_{" + ij() + "}";
    const std::string va = v + "_{" + str(i_) + "," + p0 + "}",
                      vb = v + "_{" + str(i_) + "," + p1 + "}";
    const std::string theta_tex =
        scaled ? "\\theta_{" + str(pair) + "}" : base + "^{-" + two_p + "/" + str(r) + "}";
    out_.equation = hat + " = " +
                    (even ? va + "\\cos\\phi - " + vb + "\\sin\\phi"
                          : va + "\\sin\\phi + " + vb + "\\cos\\phi") +
                    ",\\quad \\phi = " + str(pos) + "\\cdot " + theta_tex + " = " + tex(angle) +
                    ",\\quad " + hat + " = " + tex(out_.value);
    quantity(v + "[" + p0 + "]", va, a);
    quantity(v + "[" + p1 + "]", vb, b);
    quantity("frequency θ_" + str(pair),
             "\\theta_{" + str(pair) + "} = " + (scaled ? "\\text{rescaled } " : "") + base +
                 "^{-2i/" + width + "}",
             theta);
    quantity("angle", "\\phi = pos \\cdot \\theta_{" + str(pair) + "}", angle);
    quantity("cos", "\\cos\\phi", cos_a);
    quantity("sin", "\\sin\\phi", sin_a);
  }

  // ---- one head: scores to context -------------------------------------------------------

  void scores() {
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
    out_.equation = "S_{" + ij() + "} = \\sum_{t=0}^{" + str(dk() - 1) + "} " + qs + "_{" +
                    str(i_) + ",t}\\, " + ks + "_{" + str(c_) + ",t} = " + tex(out_.value) +
                    (grouped() ? ",\\quad k \\text{ of K/V head } " + str(kv_head() + 1) : "");
    kv_head_quantity();
  }

  void scaled() {
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

  void capped() {
    const float s = value_at(StepKind::Scaled, out_.head, i_, c_);
    const double cap = layer_.config().softcap;
    const double ratio = double(s) / cap, t = std::tanh(ratio);
    out_.summary = "soft-capped score = c · tanh(S̃ / c) = " + num(cap) + " · tanh(" + num(s) +
                   " / " + num(cap) + ") = " + num(cap) + " · " + num(t) + " = " + num(out_.value) +
                   ": near S̃ while |S̃| is small against c, never beyond ±" + num(cap) + " (" +
                   head_text() + ")";
    out_.equation = "\\hat{S}_{" + ij() + "} = c \\tanh(\\tilde{S}_{" + ij() +
                    "} / c) = " + tex(cap) + " \\tanh(" + tex(s) + " / " + tex(cap) +
                    ") = " + tex(out_.value);
    quantity("scaled score", "\\tilde{S}_{" + ij() + "}", s);
    quantity("cap", "c", cap);
    quantity("tanh", "\\tanh(\\tilde{S}_{" + ij() + "} / c)", t);
  }

  void alibi() {
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

  void masked() {
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
    quantity(visible ? "mask (visible)" : "mask (masked)", "M_{" + ij() + "}",
             visible ? 0.0 : -kInf);
  }

  void weights() {
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
      out_.equation =
          "A_{" + ij() + "} = 0 \\quad (\\text{every key of row " + str(i_) + " masked})";
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

  void context() {
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

  // ---- heads together ----------------------------------------------------------------------

  void concat() {
    const std::size_t head = c_ / dk(), within = c_ % dk();
    const float z = value_at(StepKind::Context, int(head), i_, within);
    out_.summary = "concatenation: column " + str(c_) + " is column " + str(within) + " of head " +
                   str(head + 1) + "'s context (head index ⌊" + str(c_) + " / " + str(dk()) +
                   "⌋ = " + str(head) + " from 0) = " + num(out_.value);
    out_.equation = "Z_{" + ij() + "} = (Z_{" + str(head + 1) + "})_{" + str(i_) + "," +
                    str(within) + "} = " + tex(out_.value);
    quantity("head index (0-based)", "\\lfloor c / d_k \\rfloor", double(head));
    quantity("column in head", "c \\bmod d_k", double(within));
    quantity("context value", "(Z_{" + str(head + 1) + "})_{" + str(i_) + "," + str(within) + "}",
             z);
  }

  void output() {
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
                   " (out_proj.weight row " + str(c_) + "): Σ_t z_" + str(i_) + "[t]·W_O[" +
                   str(c_) + "][t] over " + str(inner) + " terms = " + num(sum.total) +
                   (bias ? " plus bias b_O[" + str(c_) + "] = " + num(b) : "") + " → " +
                   num(out_.value);
    const std::string w_tex = "(W_O)_{" + str(c_) + ",t}";
    const std::string b_tex = "(b_O)_{" + str(c_) + "}";
    out_.equation = "y_{" + ij() + "} = \\sum_{t=0}^{" + str(inner - 1) + "} z_{" + str(i_) +
                    ",t}\\, " + w_tex + (bias ? " + " + b_tex : "") + " = " + tex(out_.value);
    quantity("sum of products", "\\sum_t z_{" + str(i_) + ",t}\\, " + w_tex, sum.total);
    if (bias) quantity("bias", b_tex, b);
  }

  const AttentionLayer& layer_;
  const Trace& trace_;
  StepKind kind_;
  CellExplanation& out_;
  std::size_t i_, c_;
};

}  // namespace

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
