// What the explain_cell tests share (tests/cpp/test_explain*.cpp): the layer they explain, the
// trace's steps and cells, and check_all_cells, which checks every cell of every traced step
// against the independently read inputs.
#pragma once

#include <algorithm>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include "approx.hpp"
#include "attention/error.hpp"
#include "attention/layer/explain.hpp"
#include "attention/layer/layer.hpp"

namespace explain_test {

using Catch::Matchers::ContainsSubstring;

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// The layer (d_model 8, 2 heads, seed 11 unless a test changes them) and the forward's inputs.
inline attn::LayerConfig explained_layer() {
  attn::LayerConfig config;
  config.d_model = 8;
  config.heads = 2;
  config.seed = 11;
  return config;
}
struct Setup {
  attn::LayerConfig layer = explained_layer();
  std::size_t n = 4, kv_n = 0;  // kv_n > 0: cross-attention
  std::size_t window = 0;
  bool scale = true;
  attn::MaskKind mask = attn::MaskKind::Causal;
  std::vector<std::uint8_t> key_padding;
};

struct Run {
  attn::LayerConfig config;
  std::vector<float> x, kv;
  attn::ForwardOptions options;
};

inline const attn::Step& step_of(const attn::Trace& trace, const std::string& id, int head) {
  for (const auto& step : trace.steps) {
    if (step.id() == id && step.head == head) return step;
  }
  FAIL("no step " << id << " head " << head);
  throw 0;
}
inline const attn::Step* maybe_step(const attn::Trace& trace, const std::string& id, int head) {
  for (const auto& step : trace.steps) {
    if (step.id() == id && step.head == head) return &step;
  }
  return nullptr;
}
inline float cell(const attn::Step& step, std::size_t r, std::size_t c) {
  return step.data[r * step.shape[1] + c];
}
inline double quantity(const attn::CellExplanation& e, const std::string& name) {
  for (const auto& q : e.quantities) {
    if (q.name == name) return q.value;
  }
  FAIL("no quantity '" << name << "' in the explanation of " << e.step);
  return 0.0;
}
inline bool has_quantity(const attn::CellExplanation& e, const std::string& name) {
  return std::any_of(e.quantities.begin(), e.quantities.end(),
                     [&](const auto& q) { return q.name == name; });
}

// |got - want| within float tolerance of a sum whose terms have total magnitude `magnitude`.
inline void require_near(double got, double want, double magnitude, const std::string& what) {
  INFO(what << ": got " << got << " want " << want);
  REQUIRE(std::abs(got - want) <= 1e-5 * std::max(magnitude, std::abs(want)) + 1e-7);
}

struct TermSum {
  double total = 0.0, magnitude = 0.0;
};
inline TermSum sum_terms(const attn::CellExplanation& e) {
  TermSum s;
  for (std::size_t t = 0; t < e.terms.size(); ++t) {
    const auto& term = e.terms[t];
    REQUIRE(term.product == term.left * term.right);
    s.total += term.product;
    s.magnitude += std::abs(double(term.product));
  }
  return s;
}

// Checks one cell's explanation against values read directly from the trace and the weights.
inline void check_cell(const attn::AttentionLayer& layer, const Run& run, const attn::Step& step,
                       std::size_t i, std::size_t c) {
  const auto& trace = layer.last_result().trace;
  const auto& config = layer.config();
  const std::size_t dk = layer.head_dim(), inner = layer.inner_dim(), d = config.d_model;
  const std::size_t kv_inner = layer.kv_inner_dim();
  const int h = step.head;  // for k, v, k_rotated: the key/value head
  const std::size_t kv_heads = config.kv_heads == 0 ? config.heads : config.kv_heads;
  // The key/value head query head h reads (h itself for k, v, k_rotated).
  const int g = h < 0 ? -1
                : attn::step_info(step.kind).per_kv_head
                    ? h
                    : int(std::size_t(h) / (config.heads / kv_heads));
  const auto e = attn::explain_cell(layer, step.id(), h, i, c);
  INFO("step " << step.id() << " head " << h << " cell " << i << "," << c << ": " << e.summary);
  REQUIRE(e.step == step.id());
  REQUIRE(e.head == h);
  REQUIRE(e.row == i);
  REQUIRE(e.col == c);
  REQUIRE(e.kv_head == g);
  REQUIRE(step.kv_head == g);
  const float value = cell(step, i, c);
  if (std::isnan(value)) FAIL("NaN in the trace");
  REQUIRE((e.value == value || (std::isinf(value) && e.value == value)));
  REQUIRE(!e.summary.empty());
  REQUIRE(!e.equation.empty());
  const TermSum sum = sum_terms(e);
  const double bias = has_quantity(e, "bias") ? quantity(e, "bias") : 0.0;
  const std::string& id = step.id();

  if (id == "embedding") {
    REQUIRE(value == run.x[i * d + c]);
    REQUIRE(e.terms.empty());
    REQUIRE_THAT(e.summary, ContainsSubstring("lookup"));
  } else if (id == "positional") {
    if (config.positional == attn::PositionalKind::Sinusoidal) {
      const double angle = quantity(e, "angle");
      REQUIRE(angle == double(i) / std::pow(10000.0, 2.0 * double(c / 2) / double(d)));
      require_near(c % 2 == 0 ? std::sin(angle) : std::cos(angle), value, 1.0, "sinusoid");
    } else {
      REQUIRE_THAT(e.summary, ContainsSubstring("lookup"));
    }
  } else if (id == "input" || id == "source") {
    const bool additive = maybe_step(trace, "positional", -1) != nullptr;
    const bool source = id == "source";
    const float raw = source ? run.kv[i * d + c] : run.x[i * d + c];
    if (additive) {
      attn::Matrix table(i + 1, d);
      if (config.positional == attn::PositionalKind::Sinusoidal) {
        attn::sinusoidal_encoding(table);
      } else {
        attn::learned_encoding(table, config.seed);
      }
      const double pe = quantity(e, "positional encoding");
      REQUIRE(pe == table(i, c));  // the same table the forward added, beyond row n too
      const double x_part = quantity(e, source ? "source token (value − PE)" : "embedding");
      if (source) {
        require_near(x_part, raw, std::abs(raw) + std::abs(pe), "kv = value - PE");
      } else {
        REQUIRE(x_part == raw);
      }
      require_near(x_part + pe, value, std::abs(x_part) + std::abs(pe), "x + PE");
    } else {
      REQUIRE(value == raw);
    }
  } else if (id == "q" || id == "k" || id == "v") {
    const std::size_t which = id == "q" ? 0 : id == "k" ? 1 : 2;
    const auto& x_in = step_of(trace, which != 0 && run.options.cross ? "source" : "input", -1);
    // W_Q's inner rows, then W_K's and W_V's kv_inner rows each.
    const std::size_t w_row =
        (which == 0 ? 0 : inner + (which - 1) * kv_inner) + std::size_t(h) * dk + c;
    REQUIRE(e.terms.size() == d);
    for (std::size_t t = 0; t < d; ++t) {
      REQUIRE(e.terms[t].index == t);
      REQUIRE(e.terms[t].left == cell(x_in, i, t));
      REQUIRE(e.terms[t].right == layer.weight_view().in_proj_weight[w_row * d + t]);
    }
    if (config.bias) {
      REQUIRE(bias == layer.weight_view().in_proj_bias[w_row]);
    } else {
      REQUIRE(!has_quantity(e, "bias"));
    }
    REQUIRE(quantity(e, "sum of products") == sum.total);
    require_near(sum.total + bias, value, sum.magnitude + std::abs(bias), "x·W + b");
  } else if (id == "q_normed" || id == "k_normed") {
    const bool is_q = id == "q_normed", whole = config.qk_norm == attn::QkNorm::Whole;
    const std::size_t heads = is_q ? config.heads : kv_heads;
    const std::size_t width = whole ? heads * dk : dk, index = (whole ? h * dk : 0) + c;
    // The norm's row: this head's values, or every head's of row i.
    std::vector<double> row;
    for (std::size_t hh = whole ? 0 : h; hh < (whole ? heads : h + 1); ++hh) {
      const auto& raw = step_of(trace, is_q ? "q" : "k", int(hh));
      for (std::size_t t = 0; t < dk; ++t) row.push_back(cell(raw, i, t));
    }
    REQUIRE(e.terms.size() == width);
    double squares = 0.0;
    for (std::size_t t = 0; t < width; ++t) {
      REQUIRE(e.terms[t].left == float(row[t]));
      squares += row[t] * row[t];
    }
    require_near(quantity(e, "sum of squares"), squares, squares, "Σ x²");
    const double rms = std::sqrt(squares / double(width) + config.qk_norm_eps);
    require_near(quantity(e, "rms"), rms, rms, "rms");
    const auto& weights = is_q ? layer.weight_view().q_norm : layer.weight_view().k_norm;
    const double w = double(weights[index]) +
                     (config.qk_norm_weight == attn::RmsNormWeight::OnePlus ? 1.0 : 0.0);
    REQUIRE(quantity(e, "weight") == w);
    require_near(row[index] / rms * w, value, std::abs(row[index] / rms * w), "x / rms · w");
  } else if (id == "q_rotated" || id == "k_rotated") {
    const bool normed = config.qk_norm != attn::QkNorm::None;
    const auto& raw = step_of(
        trace, id == "q_rotated" ? (normed ? "q_normed" : "q") : (normed ? "k_normed" : "k"), h);
    // A partial rotary turns the first r columns only; the rest pass through.
    const std::size_t r = config.rope.rotary_dims ? config.rope.rotary_dims : dk;
    if (c >= r) {
      REQUIRE(e.terms.empty());
      REQUIRE(value == cell(raw, i, c));
      REQUIRE(quantity(e, "rotary dims") == double(r));
      REQUIRE_THAT(e.summary, ContainsSubstring("passes through"));
      return;
    }
    // Interleaved: pair p = (2p, 2p+1); rotate_half: (p, p + r/2).
    const bool half = config.rope.pairing == attn::RopePairing::RotateHalf;
    const std::size_t p = half ? c % (r / 2) : c / 2;
    const std::size_t first = half ? p : 2 * p, second = half ? p + r / 2 : 2 * p + 1;
    REQUIRE(e.terms.size() == 2);
    REQUIRE(e.terms[0].index == first);
    REQUIRE(e.terms[1].index == second);
    REQUIRE(e.terms[0].left == cell(raw, i, first));
    REQUIRE(e.terms[1].left == cell(raw, i, second));
    const double theta = config.rope.frequencies.empty()
                             ? std::pow(config.rope.base, -2.0 * double(p) / double(r))
                             : config.rope.frequencies[p];
    REQUIRE(quantity(e, "frequency θ_" + std::to_string(p)) == theta);
    const double angle = quantity(e, "angle");
    REQUIRE(angle == double(i) * theta);
    REQUIRE(quantity(e, "cos") == float(std::cos(angle)));
    REQUIRE(quantity(e, "sin") == float(std::sin(angle)));
    require_near(sum.total, value, sum.magnitude, "rotation");
  } else if (id == "scores") {
    const bool rope = config.positional == attn::PositionalKind::Rope;
    const bool normed = config.qk_norm != attn::QkNorm::None;
    const auto& q = step_of(trace, rope ? "q_rotated" : normed ? "q_normed" : "q", h);
    const auto& k = step_of(trace,
                            rope     ? "k_rotated"
                            : normed ? "k_normed"
                                     : "k",
                            g);  // its group's
    REQUIRE(e.terms.size() == dk);
    for (std::size_t t = 0; t < dk; ++t) {
      REQUIRE(e.terms[t].left == cell(q, i, t));
      REQUIRE(e.terms[t].right == cell(k, c, t));
    }
    require_near(sum.total, value, sum.magnitude, "q·k");
  } else if (id == "scaled") {
    const double score = quantity(e, "score");
    REQUIRE(score == cell(step_of(trace, "scores", h), i, c));
    const double scale = quantity(e, "scale");
    const float expected = config.scale != 0.0 ? float(config.scale)  // the model's own
                                               : float(1.0 / std::sqrt(double(dk)));
    REQUIRE(scale == (run.options.scale ? expected : 1.0f));
    require_near(score * scale, value, std::abs(score * scale), "S · scale");
  } else if (id == "capped") {
    const double scaled = quantity(e, "scaled score");
    REQUIRE(scaled == cell(step_of(trace, "scaled", h), i, c));
    const double cap = quantity(e, "cap");
    REQUIRE(cap == config.softcap);
    REQUIRE(quantity(e, "tanh") == std::tanh(scaled / cap));
    require_near(cap * std::tanh(scaled / cap), value, cap, "c·tanh(S/c)");
    REQUIRE(std::abs(value) <= cap);
  } else if (id == "alibi") {
    const double slope = quantity(e, "slope");
    REQUIRE(slope == attn::alibi_slopes(config.heads)[std::size_t(h)]);
    const double distance = quantity(e, "distance");
    REQUIRE(distance == std::abs(double(i) - double(c)));
    require_near(-slope * distance, value, slope * distance, "-m |i-j|");
  } else if (id == "masked") {
    const bool capped = maybe_step(trace, "capped", h) != nullptr;
    const double scaled = quantity(e, capped ? "soft-capped score" : "scaled score");
    REQUIRE(scaled == cell(step_of(trace, capped ? "capped" : "scaled", h), i, c));
    const auto* alibi = maybe_step(trace, "alibi", h);
    const double alibi_bias = alibi ? quantity(e, "ALiBi bias") : 0.0;
    if (alibi) REQUIRE(alibi_bias == cell(*alibi, i, c));
    const bool visible = attn::is_visible(run.options.mask, i, c, step.shape[1]);
    if (visible) {
      REQUIRE(quantity(e, "mask (visible)") == 0.0);
      require_near(scaled + alibi_bias, value, std::abs(scaled) + std::abs(alibi_bias), "masked");
    } else {
      REQUIRE(quantity(e, "mask (masked)") == -kInf);
      REQUIRE(value == -std::numeric_limits<float>::infinity());
      REQUIRE_THAT(e.summary, ContainsSubstring("masked"));
    }
  } else if (id == "weights") {
    const auto& x = step_of(trace, "masked", h);
    const std::size_t keys = x.shape[1];
    REQUIRE(quantity(e, "masked score") == cell(x, i, c));
    bool any_visible = false;
    for (std::size_t k = 0; k < keys; ++k) any_visible |= std::isfinite(cell(x, i, k));
    if (!any_visible) {
      REQUIRE(value == 0.0f);
      REQUIRE(e.terms.empty());
      REQUIRE_THAT(e.summary, ContainsSubstring("every key is masked"));
    } else {
      double max = -kInf;
      for (std::size_t k = 0; k < keys; ++k) {
        if (std::isfinite(cell(x, i, k))) max = std::max(max, double(cell(x, i, k)));
      }
      REQUIRE(quantity(e, "row max") == max);
      const double exp = quantity(e, "exp");
      REQUIRE(exp == std::exp(double(cell(x, i, c)) - max));
      require_near(exp / quantity(e, "row sum"), value, 1.0, "exp / sum");
      REQUIRE(e.terms.size() == keys);
      require_near(sum.total, 1.0, 1.0, "weights of a row sum to 1");
      require_near(e.terms[c].product, value, 1.0, "this key's term");
      const auto& a = step_of(trace, "weights", h);
      for (std::size_t k = 0; k < keys; ++k) {
        require_near(e.terms[k].product, cell(a, i, k), 1.0, "term k = A_ik");
      }
      if (!std::isfinite(cell(x, i, c))) REQUIRE(value == 0.0f);
    }
  } else if (id == "context") {
    const auto& a = step_of(trace, "weights", h);
    const auto& v = step_of(trace, "v", g);  // its group's values
    REQUIRE(e.terms.size() == a.shape[1]);
    for (std::size_t j = 0; j < e.terms.size(); ++j) {
      REQUIRE(e.terms[j].left == cell(a, i, j));
      REQUIRE(e.terms[j].right == cell(v, j, c));
    }
    require_near(sum.total, value, sum.magnitude, "A·V");
  } else if (id == "concat") {
    REQUIRE(quantity(e, "head index (0-based)") == double(c / dk));
    REQUIRE(quantity(e, "column in head") == double(c % dk));
    REQUIRE(quantity(e, "context value") == value);
    REQUIRE(cell(step_of(trace, "context", int(c / dk)), i, c % dk) == value);
  } else if (id == "output") {
    const auto& z = step_of(trace, "concat", -1);
    if (!config.out_proj) {
      REQUIRE(e.terms.empty());
      REQUIRE(quantity(e, "concat") == value);
      REQUIRE(cell(z, i, c) == value);
    } else {
      REQUIRE(e.terms.size() == inner);
      for (std::size_t t = 0; t < inner; ++t) {
        REQUIRE(e.terms[t].left == cell(z, i, t));
        REQUIRE(e.terms[t].right == layer.weight_view().out_proj_weight[c * inner + t]);
      }
      if (attn::has_out_bias(config)) {
        REQUIRE(bias == layer.weight_view().out_proj_bias[c]);
      } else {
        REQUIRE(!has_quantity(e, "bias"));
      }
      require_near(sum.total + bias, value, sum.magnitude + std::abs(bias), "z·W_O + b");
    }
  } else {
    FAIL("a step the test does not know: " << id);
  }
}

// Builds the layer, runs a traced forward and checks every cell of every step.
inline void check_all_cells(const Setup& s) {
  Run run;
  run.config = s.layer;
  // q/k norms: a layer over borrowed weights, as a model's trace has it (seeded, with drawn norms;
  // a layer owning its norms: test_layer_qk_norm.cpp).
  const bool borrowed = s.layer.qk_norm != attn::QkNorm::None;
  attn::LayerConfig plain = s.layer;
  plain.qk_norm = attn::QkNorm::None;
  const attn::LayerWeights owned = attn::AttentionLayer(plain).weights();
  const std::size_t dk = plain.head_dim ? plain.head_dim : plain.d_model / plain.heads;
  const std::size_t kv = plain.kv_heads ? plain.kv_heads : plain.heads;
  const bool whole = s.layer.qk_norm == attn::QkNorm::Whole;
  const auto q_norm = random_floats(whole ? plain.heads * dk : dk, s.layer.seed + 3, 0.5);
  const auto k_norm = random_floats(whole ? kv * dk : dk, s.layer.seed + 4, 0.5);
  attn::LayerWeightsView view = attn::view_of(owned);
  if (borrowed) {
    view.q_norm = q_norm;
    view.k_norm = k_norm;
  }
  attn::AttentionLayer layer =
      borrowed ? attn::AttentionLayer(run.config, view) : attn::AttentionLayer(run.config);
  run.x = random_floats(s.n * s.layer.d_model, s.layer.seed + 1);
  run.options.n = s.n;
  if (s.kv_n > 0) {
    run.kv = random_floats(s.kv_n * s.layer.d_model, s.layer.seed + 2);
    run.options.cross = true;
    run.options.kv = run.kv;
    run.options.kv_n = s.kv_n;
  }
  run.options.mask.kind = s.mask;
  run.options.mask.key_padding = s.key_padding;
  run.options.mask.window = s.window;
  run.options.mask.prefix = 2;  // for PrefixLM
  run.options.scale = s.scale;
  run.options.want_trace = true;
  const auto& result = layer.forward(run.x, run.options);
  std::vector<std::string> seen;
  for (const auto& step : result.trace.steps) {
    seen.push_back(step.id());
    for (std::size_t i = 0; i < step.shape[0]; ++i) {
      for (std::size_t c = 0; c < step.shape[1]; ++c) check_cell(layer, run, step, i, c);
    }
  }
  // The expected optional steps were there to be checked.
  auto saw = [&](const char* id) { return std::find(seen.begin(), seen.end(), id) != seen.end(); };
  REQUIRE(saw("weights"));
  if (s.layer.positional == attn::PositionalKind::Rope) REQUIRE(saw("q_rotated"));
  if (s.layer.positional == attn::PositionalKind::Alibi) REQUIRE(saw("alibi"));
  REQUIRE(saw("capped") == (s.layer.softcap > 0.0));
  REQUIRE(saw("q_normed") == borrowed);
  REQUIRE(saw("k_normed") == borrowed);
  if (s.kv_n > 0) REQUIRE(saw("source"));
}

inline attn::AttentionLayer traced_layer(std::vector<float>& x) {
  attn::LayerConfig config;
  config.d_model = 8;
  config.heads = 2;
  config.seed = 5;
  attn::AttentionLayer layer(config);
  x = random_floats(4 * 8, 6);
  attn::ForwardOptions options;
  options.n = 4;
  options.mask.kind = attn::MaskKind::Causal;
  options.want_trace = true;
  layer.forward(x, options);
  return layer;
}

inline void require_error(const attn::AttentionLayer& layer, const std::string& step, int head,
                          std::size_t row, std::size_t col, const std::string& expected) {
  INFO("explain " << step << " head " << head << " cell " << row << "," << col);
  REQUIRE_THROWS_AS(attn::explain_cell(layer, step, head, row, col), attn::Error);
  REQUIRE_THROWS_WITH(attn::explain_cell(layer, step, head, row, col), ContainsSubstring(expected));
}

}  // namespace explain_test
