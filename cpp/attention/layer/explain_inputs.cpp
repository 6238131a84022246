// The arithmetic behind a cell of the walkthrough's first steps: the input (embedding, positions),
// the q/k/v projections, the q/k norms and RoPE (explainer.hpp; the rest in explain.cpp).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attention/layer/explainer.hpp"

namespace attn::explain_detail {

void Explainer::embedding() {
  out_.summary = "token embedding X[" + str(i_) + "][" + str(c_) + "] = " + num(out_.value) +
                 ": a lookup, nothing is computed (row " + str(i_) + " is the embedding of token " +
                 str(i_) +
                 " as given to forward; layer.embed(ids) looks rows up in the seeded table)";
  out_.equation = "X_{" + ij() + "} = " + tex(out_.value);
}

// PE[pos][c] exactly as the forward added it.
float Explainer::positional_value(std::size_t pos, std::size_t c) const {
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

void Explainer::positional() {
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
                  str(2 * pair) + "/" + str(d_model()) + "}}\\right) = \\" + fn + "(" + tex(angle) +
                  ") = " + tex(out_.value);
  quantity("position", "pos", double(pos));
  quantity("dimension", "c", double(c));
  quantity("pair index", "i = \\lfloor c / 2 \\rfloor", double(pair));
  quantity("denominator", "10000^{2i/d_{model}}", denominator);
  quantity("angle", "pos / 10000^{2i/d_{model}}", angle);
}

void Explainer::input() {
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
                   " = the token embedding as given, no additive positional encoding" + why + ": " +
                   x + "[" + str(i_) + "][" + str(c_) + "] = " + num(out_.value);
    out_.equation =
        x_tex + "_{in," + ij() + "} = " + x_tex + "_{" + ij() + "} = " + tex(out_.value);
    if (!source) {
      quantity("embedding", "X_{" + ij() + "}", value_at(StepKind::Embedding, -1, i_, c_));
    }
    return;
  }
  const float pe = positional_value(i_, c_);
  const double raw =
      source ? double(out_.value) - double(pe) : double(value_at(StepKind::Embedding, -1, i_, c_));
  out_.summary =
      std::string(source ? "cross-attention source" : "input") + " = token embedding + " +
      kind_name + " positional encoding: " + num(raw) + " + " + num(pe) + " = " + num(out_.value) +
      (source ? " (kv itself is not in the trace: shown as the value minus PE; the source's "
                "positions count from 0 too)"
              : "");
  out_.equation = x_tex + "_{in," + ij() + "} = " + x_tex + "_{" + ij() + "} + PE_{" + ij() +
                  "} = " + tex(raw) + " + " + tex(pe) + " = " + tex(out_.value);
  quantity(source ? "source token (value − PE)" : "embedding", x_tex + "_{" + ij() + "}", raw);
  quantity("positional encoding", "PE_{" + ij() + "}", pe);
}

void Explainer::projection() {
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
  const std::string row_text = "W_" + M + " row " + str(r) + " = in_proj_weight row " + str(w_row);
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
void Explainer::normed() {
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
                 " = " + num(x) + " / " + num(rms) + " · " + num(factor) + " = " + num(out_.value) +
                 ", rms = √(Σ " + v + "² / " + str(width) + " + ε) (" + head_text() + ")";
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

void Explainer::rotation() {
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
  out_.equation =
      hat + " = " +
      (even ? va + "\\cos\\phi - " + vb + "\\sin\\phi" : va + "\\sin\\phi + " + vb + "\\cos\\phi") +
      ",\\quad \\phi = " + str(pos) + "\\cdot " + theta_tex + " = " + tex(angle) + ",\\quad " +
      hat + " = " + tex(out_.value);
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

}  // namespace attn::explain_detail
