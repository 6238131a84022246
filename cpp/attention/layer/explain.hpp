// "The arithmetic behind a cell": for any cell of a traced step, the numbers that made it, so
// the page can show them on hover without recomputing attention math in JavaScript.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attention/layer/layer.hpp"

namespace attn {

// One term of a dot product or weighted sum: left · right = product (index t over the summed
// axis). Products are computed in float, as the page shows them.
struct ExplainTerm {
  std::size_t index;
  float left;
  float right;
  float product;
};

// Another number that goes into the cell, e.g. {"scale", "\frac{1}{\sqrt{d_k}}", 0.3535}.
struct ExplainQuantity {
  std::string name;   // plain text
  std::string latex;  // the symbol, LaTeX
  double value;       // sums are accumulated in double; -inf for a masked cell's mask
};

// Index conventions: rows, columns, keys, dimensions and summation indices count from 0 (as
// the trace's data does). Heads are 0-based in `head` (as Step::head) but named 1-based in
// `summary` ("head 1 of 2"), matching the trace's titles and equations.
struct CellExplanation {
  std::string step;  // the step id
  int head = -1;     // 0-based, or -1 for a step shared by all heads (k, v, k_rotated: K/V head)
  int kv_head = -1;  // the key/value head the cell's head is or reads (Step::kv_head), or -1
  std::size_t row = 0, col = 0;
  float value = 0.0f;                       // the cell exactly as the trace holds it
  std::string summary;                      // plain text: what the cell is and how it is made
  std::string equation;                     // LaTeX with the indices and the value substituted
  std::string left_label, right_label;      // what a term's left and right are, e.g. "q_2[t]"
  std::vector<ExplainTerm> terms;           // empty for steps without a sum
  std::vector<ExplainQuantity> quantities;  // the other numbers, in the order they are applied
};

// Explains cell (row, col) of step `step` (for per-head steps: of head `head`, 0-based; pass
// -1 for steps shared by all heads) of the layer's last successful forward, which must have
// run with want_trace. Everything is read from that trace and layer.weights():
//
//  embedding    a lookup: no terms, no quantities.
//  positional   sinusoidal: position, dimension, pair index i = ⌊c/2⌋, 10000^{2i/d_model}, the
//               angle; value = sin (even c) or cos (odd c) of the angle. learned: a lookup.
//  input        quantities: embedding X[i][c], then PE[i][c] if the encoding is additive.
//  source       (cross-attention) kv[i][c] (= value − PE, as kv itself is not traced) and
//               PE[i][c] if additive; else a lookup.
//  q, k, v      terms x_in[i][t] · W[r][t] over t < d_model, where r = h·d_k + c is the row of
//               the head's W_Q / W_K / W_V block of in_proj_weight (W_Q's inner rows, then W_K's
//               and W_V's kv_inner rows; for k and v, h is the key/value head) (k and v read the
//               "source" step under cross-attention); quantities: the sum, then the bias b[r].
//  q_normed,    (q/k norms) terms x_t · x_t over the RMSNorm's row: the head's d_k values, or
//  k_normed     every head's values of row i (the whole projection: every head's q or k step
//               must be in the trace); quantities: x_c, the sum of squares, rms = √(Σx²/width +
//               ε), the weight (w_c, or Gemma's 1 + w_c); value = x_c / rms · weight.
//  q_rotated,   RoPE (config.rope) rotates the pair (2p, 2p+1), p = ⌊c/2⌋ (interleaved), or
//  k_rotated    (p, p + r/2), p = c mod r/2 (rotate_half), by angle pos·θ_p, θ_p =
//               base^{-2p/r} or the spec's rescaled θ_p (r = d_k, or the spec's rotary dims):
//               two terms (the pair's pre-rotation values times cos / ∓sin), quantities: the
//               pair, θ_p, the angle, cos, sin. A column c >= r passes through: no terms,
//               quantities: its value and r. (With q/k norms, the normalised q and k turn.)
//  scores       terms q_i[t] · k_j[t] over t < d_k (the rotated q, k with RoPE, else the
//               normalised ones with q/k norms), k from the
//               head's key/value head g = h / (heads / kv_heads); the sum; with grouped-query
//               attention the summary names g ("K/V head 2 of 2 (0-based 1), shared by heads
//               3–4") and a quantity "key/value head (0-based)" holds it.
//  scaled       quantities: S_ij, the scale (1/√d_k, the config's own scale, or 1 with scaling
//               off).
//  capped       (a soft-cap c) quantities: the scaled score S̃_ij, c, tanh(S̃_ij / c); value =
//               c·tanh(S̃_ij / c).
//  alibi        quantities: slope m_h, distance |i − j|; value = −m_h·|i − j|.
//  masked       quantities: the scaled score (the soft-capped score with a cap), the ALiBi bias
//               (with ALiBi), the mask (0 or −inf).
//  weights      quantities: x_ij (the masked score), the row max over visible keys, x_ij − max,
//               e^{x_ij − max}, the row sum Σ_k e^{x_ik − max}; value = exp / sum. Terms: one
//               per key k of the row, left = e^{x_ik − max}, right = 1 / sum, product = A_ik
//               (so the products sum to 1 and term j's product is this cell). A row whose keys
//               are all masked has zero weights (not NaN): no terms, and says so.
//  context      terms A_ij · v_j[c] over keys j, v from the head's key/value head (named as in
//               scores when grouped).
//  concat       quantities: head index ⌊c / d_k⌋ (0-based), column in head c mod d_k, the
//               context value (equal to the cell).
//  output       terms z_i[t] · W_O[c][t] over t < heads·d_k, quantities: the sum, b_O[c];
//               without an output projection: output = concat.
//
// Throws attn::Error naming the problem and the expected value: no traced forward yet, an
// unknown step (listing the ids present), a head out of range (or given for a shared step),
// a row or column out of range, or weights changed (set_weights / load_safetensors) since the
// traced forward, so that the trace no longer matches them.
CellExplanation explain_cell(const AttentionLayer& layer, const std::string& step, int head,
                             std::size_t row, std::size_t col);

}  // namespace attn
