// Tests of AttentionLayer as a Llama-family block: grouped-query attention (kv_heads), RoPE as
// the checkpoint has it (rotate_half or interleaved, any base, rescaled frequencies), the
// families' biases, Mistral's sliding window; against the independent scalar reference
// (reference::gqa_attention) on every path (weights, flash, traced, one head traced, borrowed
// weights), the trace's key/value heads, their step text and explanations, and the errors.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "approx.hpp"
#include "attention/error.hpp"
#include "attention/layer/explain.hpp"
#include "attention/layer/layer.hpp"
#include "attention/layer/layer_reference.hpp"
#include "attention/layer/step_text.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

// The RoPE variants the families use: their label, pairing and base.
enum class Rope { None, Interleaved, RotateHalf, RotateHalfMillion, Llama3 };
struct RopeVariant {
  const char* name;
  attn::RopePairing pairing;
  double base;
};
RopeVariant rope_variant(Rope r) {
  using P = attn::RopePairing;
  constexpr RopeVariant variants[] = {{"no rope", P::Interleaved, 0.0},  // by Rope
                                      {"interleaved 1e4", P::Interleaved, 1e4},
                                      {"rotate-half 1e4", P::RotateHalf, 1e4},
                                      {"rotate-half 1e6", P::RotateHalf, 1e6},
                                      {"rotate-half llama3", P::RotateHalf, 5e5}};
  return variants[static_cast<std::size_t>(r)];
}
const char* rope_name(Rope r) {
  return rope_variant(r).name;
}

// A layer's config as the tests vary it (head_dim != d_model / heads by default), and a RoPE
// variant.
struct Gqa : attn::LayerConfig {
  Rope rope = Rope::RotateHalf;
  Gqa() {
    d_model = 20;
    heads = 4;
    kv_heads = 2;
    head_dim = 6;
    seed = 5;
  }
};

attn::LayerConfig config_of(const Gqa& g) {
  attn::LayerConfig c = g;
  if (g.rope != Rope::None) {
    c.positional = attn::PositionalKind::Rope;
    c.rope.pairing = rope_variant(g.rope).pairing;
    c.rope.base = rope_variant(g.rope).base;
    if (g.rope == Rope::Llama3) {
      attn::Llama3RopeScaling scaling;
      // Small, so that d_k = 6's three pairs fall in the three bands (kept, blended, slowed).
      scaling.original_context = 1000;
      scaling.high_freq_factor = 100;
      c.rope.frequencies = attn::llama3_rope_frequencies(g.head_dim, c.rope.base, scaling);
    }
  }
  return c;
}

// The reference for `layer`'s weights (as the forward reads them) and a causal or sliding-window
// self-attention over x.
attn::reference::GqaOutputs reference_of(const attn::AttentionLayer& layer,
                                         const std::vector<float>& x, std::size_t n,
                                         std::size_t window) {
  const attn::LayerConfig& c = layer.config();
  const attn::LayerWeightsView w = layer.weight_view();
  attn::reference::GqaInputs in;
  in.d_model = c.d_model;
  in.heads = c.heads;
  in.kv_heads = c.kv_heads == 0 ? c.heads : c.kv_heads;
  in.head_dim = layer.head_dim();
  in.n = n;
  in.x = x.data();
  in.in_proj_weight = w.in_proj_weight.data();
  in.in_proj_bias = w.in_proj_bias.empty() ? nullptr : w.in_proj_bias.data();
  in.out_proj_weight = w.out_proj_weight.empty() ? nullptr : w.out_proj_weight.data();
  in.out_proj_bias = w.out_proj_bias.empty() ? nullptr : w.out_proj_bias.data();
  in.rope = c.positional == attn::PositionalKind::Rope;
  in.rotate_half = c.rope.pairing == attn::RopePairing::RotateHalf;
  in.base = c.rope.base;
  in.frequencies = c.rope.frequencies.empty() ? nullptr : c.rope.frequencies.data();
  in.causal = true;
  in.window = window;
  return attn::reference::gqa_attention(in);
}

attn::ForwardOptions options_of(std::size_t n, std::size_t window) {
  attn::ForwardOptions o;
  o.n = n;
  o.mask.kind = window > 0 ? attn::MaskKind::SlidingWindow : attn::MaskKind::Causal;
  o.mask.window = window;
  return o;
}

const attn::Step* find_step(const attn::Trace& trace, const std::string& id, int head) {
  for (const auto& step : trace.steps) {
    if (step.id() == id && step.head == head) return &step;
  }
  return nullptr;
}
const attn::Step& need_step(const attn::Trace& trace, const std::string& id, int head) {
  const attn::Step* step = find_step(trace, id, head);
  if (!step) FAIL("no step " << id << " head " << head);
  return *step;
}

// Columns [col, col + width) of a row-major [rows, row_width] double matrix.
std::vector<double> columns(const std::vector<double>& m, std::size_t rows, std::size_t row_width,
                            std::size_t col, std::size_t width) {
  std::vector<double> out;
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < width; ++c) out.push_back(m[r * row_width + col + c]);
  }
  return out;
}

// A traced forward's key/value-head steps and query-head steps against the reference.
void check_trace(const attn::AttentionLayer& layer, const attn::ForwardResult& r,
                 const attn::reference::GqaOutputs& want, std::size_t n, std::size_t window,
                 int trace_head, const std::string& label) {
  const auto& c = layer.config();
  const std::size_t dk = layer.head_dim(), kv = layer.kv_heads(), group = c.heads / kv;
  const bool rope = c.positional == attn::PositionalKind::Rope;
  const std::size_t kv_width = kv * dk, q_width = c.heads * dk;
  // K and V as they are: kv_heads steps (or the traced head's group's one).
  for (std::size_t g = 0; g < kv; ++g) {
    const bool traced = trace_head < 0 || std::size_t(trace_head) / group == g;
    for (const char* id : {"k", "v", "k_rotated"}) {
      const attn::Step* step = find_step(r.trace, id, int(g));
      if (std::string(id) == "k_rotated" && !rope) {
        REQUIRE(step == nullptr);
        continue;
      }
      INFO(label << " step " << id << " kv head " << g);
      REQUIRE((step != nullptr) == traced);
      if (!step) continue;
      REQUIRE(step->kv_head == int(g));
      REQUIRE(step->shape == std::vector<std::size_t>{n, dk});
      if (std::string(id) == "v") {
        require_close(step->data, columns(want.v, n, kv_width, g * dk, dk), 1e-5, 1e-4,
                      label + " v");
      } else if (std::string(id) == "k_rotated" || !rope) {
        require_close(step->data, columns(want.k, n, kv_width, g * dk, dk), 1e-5, 1e-4,
                      label + " " + id);
      }
    }
  }
  REQUIRE(find_step(r.trace, "k", int(kv)) == nullptr);  // no more key/value heads than kv
  for (std::size_t h = 0; h < c.heads; ++h) {
    const bool traced = trace_head < 0 || std::size_t(trace_head) == h;
    const attn::Step* scores = find_step(r.trace, "scores", int(h));
    REQUIRE((scores != nullptr) == traced);
    if (!scores) continue;
    INFO(label << " query head " << h);
    // Every per-head step of query head h names its key/value head.
    for (const auto& step : r.trace.steps) {
      if (step.head == int(h) && !attn::step_info(step.kind).per_kv_head) {
        REQUIRE(step.kv_head == int(h / group));
      }
    }
    const attn::Step& q = need_step(r.trace, rope ? "q_rotated" : "q", int(h));
    require_close(q.data, columns(want.q, n, q_width, h * dk, dk), 1e-5, 1e-4, label + " q");
    const std::vector<double> s(want.scores.begin() + h * n * n,
                                want.scores.begin() + (h + 1) * n * n);
    require_close(scores->data, s, 1e-5, 1e-4, label + " scores of its group's keys");
    // Mistral's sliding window: query i sees keys i − window < j ≤ i (and causal without one).
    const attn::Step& masked = need_step(r.trace, "masked", int(h));
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        const bool visible = j <= i && (window == 0 || double(j) > double(i) - double(window));
        REQUIRE(std::isfinite(masked.data[i * n + j]) == visible);
      }
    }
    const std::vector<float> a(want.attention.begin() + h * n * n,
                               want.attention.begin() + (h + 1) * n * n);
    require_close(need_step(r.trace, "weights", int(h)).data, a, 1e-6, 1e-4, label + " weights");
  }
}

// Every path of the layer against the reference: weights, flash, traced (with and without the
// weights, all heads and the last head), and a layer over the same weights borrowed.
void check_paths(const Gqa& g, std::size_t n, std::size_t window, std::uint32_t seed) {
  const attn::AttentionLayer owned(config_of(g));
  attn::AttentionLayer layer(config_of(g));
  REQUIRE(layer.kv_heads() == g.kv_heads);
  const auto x = random_floats(n * g.d_model, seed);
  const auto want = reference_of(layer, x, n, window);
  const std::string label = std::string(rope_name(g.rope)) + " heads " + std::to_string(g.heads) +
                            " kv " + std::to_string(g.kv_heads) + " d_k " +
                            std::to_string(g.head_dim) + " bias " + (g.bias ? "1" : "0") +
                            " out_bias " + (g.out_bias ? (*g.out_bias ? "1" : "0") : "-") +
                            " window " + std::to_string(window);
  INFO(label);
  auto options = options_of(n, window);

  const auto& weights = layer.forward(x, options);
  require_close(values(weights.output), want.output, 1e-5, 1e-4, label + " output");
  require_close(weights.attention, want.attention, 1e-6, 1e-4, label + " attention");

  options.want_weights = false;  // flash
  const auto& flash = layer.forward(x, options);
  REQUIRE(flash.attention.empty());
  require_close(values(flash.output), want.output, 1e-5, 1e-4, label + " flash output");

  options.want_trace = true;  // traced without weights: materialised into scratch
  const auto& traced = layer.forward(x, options);
  require_close(values(traced.output), want.output, 1e-5, 1e-4, label + " traced output");
  check_trace(layer, traced, want, n, window, -1, label + " traced");

  options.want_weights = true;
  options.trace_head = int(g.heads) - 1;
  const auto& one = layer.forward(x, options);
  require_close(one.attention, want.attention, 1e-6, 1e-4, label + " one head traced attention");
  check_trace(layer, one, want, n, window, int(g.heads) - 1, label + " one head traced");
  const auto one_head_traced = values(one.output);  // the next forward reuses the result

  // Over borrowed weights (a Model's block; absent biases as empty spans): the same numbers as
  // the owned weights on the same path, and as the path with the last head traced.
  const attn::LayerWeightsView view = owned.weight_view();
  REQUIRE(view.in_proj_bias.empty() == !g.bias);
  REQUIRE(view.out_proj_bias.empty() == !(g.out_proj && g.out_bias.value_or(g.bias)));
  REQUIRE(view.out_proj_weight.empty() == !g.out_proj);
  attn::AttentionLayer borrowed(config_of(g), view);
  const auto b = values(borrowed.forward(x, options_of(n, window)).output);
  REQUIRE(b == values(layer.forward(x, options_of(n, window)).output));
  require_same_across_paths(b, one_head_traced, label + " borrowed vs one head traced");
}

}  // namespace

TEST_CASE("GQA layer equals the independent reference: kv heads, biases, RoPE, window",
          "[layer][gqa]") {
  std::uint32_t seed = 900;
  for (const std::size_t kv : {std::size_t{1}, std::size_t{2}, std::size_t{4}}) {
    for (const auto& [bias, out_bias] : std::vector<std::pair<bool, std::optional<bool>>>{
             {true, std::nullopt}, {true, false}, {false, std::nullopt}, {false, true}}) {
      for (const Rope rope : {Rope::None, Rope::Interleaved, Rope::RotateHalf,
                              Rope::RotateHalfMillion, Rope::Llama3}) {
        for (const std::size_t window : {std::size_t{0}, std::size_t{3}}) {
          Gqa g;
          g.kv_heads = kv;
          g.bias = bias;
          g.out_bias = out_bias;
          g.rope = rope;
          check_paths(g, 8, window, seed++);
        }
      }
    }
  }
}

TEST_CASE("GQA with head_dim = d_model / heads, eight heads, and no output projection",
          "[layer][gqa]") {
  Gqa g;
  g.d_model = 32;
  g.heads = 8;
  g.head_dim = 0;  // 4
  g.kv_heads = 2;
  g.rope = Rope::RotateHalfMillion;
  check_paths(g, 8, 3, 21);
  g.out_proj = false;
  g.kv_heads = 4;
  check_paths(g, 8, 0, 22);
}

TEST_CASE("GQA flash path over several query blocks and key tiles", "[layer][gqa]") {
  Gqa g;
  g.d_model = 24;
  g.heads = 6;
  g.kv_heads = 2;
  g.head_dim = 8;
  g.out_bias = false;         // Qwen2's biases
  const std::size_t n = 150;  // five query blocks, two key tiles
  for (const std::size_t window : {std::size_t{0}, std::size_t{3}, std::size_t{40}}) {
    attn::AttentionLayer layer(config_of(g));
    const auto x = random_floats(n * g.d_model, 31 + std::uint32_t(window));
    const auto want = reference_of(layer, x, n, window);
    auto options = options_of(n, window);
    options.want_weights = false;
    const auto& flash = layer.forward(x, options);
    require_close(values(flash.output), want.output, 1e-5, 1e-4,
                  "flash n=150 window " + std::to_string(window));
  }
}

TEST_CASE("GQA cross-attention reads the source's kv_heads heads", "[layer][gqa]") {
  // The reference is self-attention: compare cross-attention on x with itself as the source.
  Gqa g;
  g.rope = Rope::None;
  attn::AttentionLayer layer(config_of(g));
  const std::size_t n = 6;
  const auto x = random_floats(n * g.d_model, 41);
  const auto& self = layer.forward(x, options_of(n, 0));
  const std::vector<float> want = values(self.output);
  auto options = options_of(n, 0);
  options.cross = true;
  options.kv = x;
  options.kv_n = n;
  options.want_trace = true;
  const auto& cross = layer.forward(x, options);
  require_close(values(cross.output), want, 1e-6, 1e-5, "cross on itself");
  REQUIRE(need_step(cross.trace, "k", 1).shape == std::vector<std::size_t>{n, 6});
  REQUIRE(find_step(cross.trace, "k", 2) == nullptr);
}

TEST_CASE("kv_heads = heads, interleaved RoPE, base 10000 is the layer as it was", "[layer][gqa]") {
  // kv_heads 0 and = heads, the default RoPE spec spelled out: the same numbers, bit for bit.
  attn::LayerConfig config;
  config.d_model = 16;
  config.heads = 4;
  config.positional = attn::PositionalKind::Rope;
  attn::AttentionLayer by_default(config);
  config.kv_heads = 4;
  config.rope = attn::RopeSpec{attn::RopePairing::Interleaved, 10000.0, {}, 0, attn::RopeScaling::None};
  config.out_bias = true;
  attn::AttentionLayer spelled(config);
  REQUIRE(by_default.weights().in_proj_weight == spelled.weights().in_proj_weight);
  REQUIRE(by_default.weights().out_proj_bias == spelled.weights().out_proj_bias);
  const auto x = random_floats(7 * 16, 3);
  auto options = options_of(7, 0);
  options.want_trace = true;
  const auto a = by_default.forward(x, options);
  const auto& b = spelled.forward(x, options);
  REQUIRE(values(a.output) == values(b.output));
  REQUIRE(a.attention == b.attention);
  REQUIRE(a.trace.steps.size() == b.trace.steps.size());
  for (std::size_t i = 0; i < a.trace.steps.size(); ++i) {
    REQUIRE(a.trace.steps[i].data == b.trace.steps[i].data);
    REQUIRE(a.trace.steps[i].kv_head == a.trace.steps[i].head);
    REQUIRE(attn::step_text(by_default, a.trace.steps[i]).title ==
            attn::step_text(spelled, b.trace.steps[i]).title);
  }
  // A grouped layer's seeded tensors have the grouped sizes.
  config.kv_heads = 2;
  attn::AttentionLayer grouped(config);
  REQUIRE(grouped.weights().in_proj_weight.size() == (4 + 2 * 2) * 4 * 16);
  REQUIRE(grouped.weights().in_proj_bias.size() == (4 + 2 * 2) * 4);
  REQUIRE(grouped.weights().out_proj_weight.size() == 16 * 16);
}

TEST_CASE("GQA trace: titles and equations name the key/value heads", "[layer][gqa]") {
  Gqa g;  // 4 heads, 2 kv heads, rotate-half 1e4
  attn::AttentionLayer layer(config_of(g));
  const auto x = random_floats(5 * g.d_model, 7);
  auto options = options_of(5, 0);
  options.want_trace = true;
  const auto& r = layer.forward(x, options);
  REQUIRE(attn::step_text(layer, need_step(r.trace, "k", 1)).title ==
          "Keys, K/V head 2 (query heads 3–4)");
  REQUIRE(attn::step_text(layer, need_step(r.trace, "v", 0)).title ==
          "Values, K/V head 1 (query heads 1–2)");
  REQUIRE(attn::step_text(layer, need_step(r.trace, "q", 3)).title == "Queries, head 4");
  REQUIRE_THAT(attn::step_text(layer, need_step(r.trace, "scores", 3)).equation,
               ContainsSubstring("S_{4} = \\hat{Q}_{4} \\hat{K}_{2}^\\top"));
  REQUIRE_THAT(attn::step_text(layer, need_step(r.trace, "context", 2)).equation,
               ContainsSubstring("Z_{3} = A_{3} V_{2}"));
  const std::string rotated = attn::step_text(layer, need_step(r.trace, "k_rotated", 0)).equation;
  REQUIRE_THAT(rotated, ContainsSubstring("\\operatorname{rotate\\_half}(k_{pos})"));
  REQUIRE_THAT(rotated, ContainsSubstring("\\theta_i = 10000^{-2i/d_k}"));
  // Qwen2's biases: b_K in K's equation, no b_O in the output's.
  g.out_bias = false;
  g.rope = Rope::RotateHalfMillion;
  attn::AttentionLayer qwen(config_of(g));
  const auto& q = qwen.forward(x, options);
  REQUIRE_THAT(attn::step_text(qwen, need_step(q.trace, "k", 0)).equation,
               ContainsSubstring("+ b_{K,1}"));
  REQUIRE(attn::step_text(qwen, need_step(q.trace, "output", -1)).equation == "Y = Z W_O^\\top");
  REQUIRE_THAT(attn::step_text(qwen, need_step(q.trace, "q_rotated", 0)).equation,
               ContainsSubstring("1000000^{-2i/d_k}"));
}

TEST_CASE("explain: a GQA score cell of head 3 with kv_heads 2 reads K/V head 1",
          "[explain][gqa]") {
  Gqa g;
  g.d_model = 16;
  g.heads = 4;
  g.kv_heads = 2;
  g.head_dim = 4;
  g.rope = Rope::RotateHalfMillion;
  attn::AttentionLayer layer(config_of(g));
  const std::size_t n = 5;
  const auto x = random_floats(n * g.d_model, 12);
  const auto want = reference_of(layer, x, n, 0);
  for (const int trace_head : {-1, 3}) {
    auto options = options_of(n, 0);
    options.want_trace = true;
    options.trace_head = trace_head;
    const auto& r = layer.forward(x, options);
    const attn::Step& scores = need_step(r.trace, "scores", 3);
    const attn::Step& k = need_step(r.trace, "k_rotated", 1);
    const attn::Step& q = need_step(r.trace, "q_rotated", 3);
    const auto e = attn::explain_cell(layer, "scores", 3, 4, 2);
    INFO(e.summary);
    REQUIRE(e.kv_head == 1);
    REQUIRE(e.value == scores.data[4 * n + 2]);
    REQUIRE(std::abs(double(e.value) - want.scores[(3 * n + 4) * n + 2]) <= 1e-5);
    REQUIRE(e.terms.size() == 4);
    double sum = 0.0;
    for (std::size_t t = 0; t < 4; ++t) {
      REQUIRE(e.terms[t].left == q.data[4 * 4 + t]);
      REQUIRE(e.terms[t].right == k.data[2 * 4 + t]);  // key 2 of K/V head 1
      sum += e.terms[t].product;
    }
    REQUIRE(std::abs(sum - double(e.value)) <= 1e-5);
    REQUIRE_THAT(e.summary, ContainsSubstring("head 4 of 4, which reads K/V head 2 of 2 "
                                              "(0-based 1), shared by heads 3–4"));
    REQUIRE_THAT(e.equation, ContainsSubstring("k \\text{ of K/V head } 2"));
    bool named = false;
    for (const auto& quantity : e.quantities) {
      if (quantity.name == "key/value head (0-based)") named = quantity.value == 1.0;
    }
    REQUIRE(named);
    // The context of head 3 sums A·V over K/V head 1's values.
    const auto z = attn::explain_cell(layer, "context", 3, 4, 1);
    const attn::Step& v = need_step(r.trace, "v", 1);
    for (std::size_t j = 0; j < n; ++j) REQUIRE(z.terms[j].right == v.data[j * 4 + 1]);
    REQUIRE(z.kv_head == 1);
    // A key of K/V head 1 (rows of W_K after W_Q's 16 rows): rotate_half pairs (1, 3) here.
    const auto kr = attn::explain_cell(layer, "k_rotated", 1, 3, 1);
    REQUIRE(kr.terms.size() == 2);
    REQUIRE(kr.terms[0].index == 1);
    REQUIRE(kr.terms[1].index == 3);
    REQUIRE_THAT(kr.summary, ContainsSubstring("rotate_half"));
    REQUIRE_THAT(kr.summary, ContainsSubstring("1000000^(−2i/d_k)"));
    REQUIRE_THAT(kr.summary, ContainsSubstring("K/V head 2 of 2, read by query heads 3–4"));
  }
  // k has two key/value heads: head 2 is out of range for it, though not for q.
  REQUIRE_THROWS_WITH(attn::explain_cell(layer, "k", 2, 0, 0),
                      ContainsSubstring("head 2 is out of range for step 'k': expected 0 to 1 "
                                        "(0-based; 2 key/value heads, shared by 4 query heads)"));
  REQUIRE_NOTHROW(attn::explain_cell(layer, "q", 3, 0, 0));  // q has four
}

TEST_CASE("GQA and RoPE configs are checked with messages naming the values", "[layer][gqa]") {
  Gqa g;
  g.kv_heads = 3;  // does not divide 4
  REQUIRE_THROWS_WITH(attn::AttentionLayer(config_of(g)),
                      ContainsSubstring("kvHeads must divide heads") &&
                          ContainsSubstring("heads = 4 is not divisible by kvHeads = 3") &&
                          ContainsSubstring("possible kvHeads: 1, 2, 4"));
  g.kv_heads = 8;  // more than heads
  REQUIRE_THROWS_WITH(attn::AttentionLayer(config_of(g)),
                      ContainsSubstring("kvHeads must be at most heads") &&
                          ContainsSubstring("kvHeads = 8 > heads = 4"));
  g.kv_heads = 2;
  g.head_dim = 5;  // odd, with RoPE
  REQUIRE_THROWS_WITH(attn::AttentionLayer(config_of(g)),
                      ContainsSubstring("RoPE rotates pairs of dimensions, so d_k must be even; "
                                        "d_k = 5"));
  g.rope = Rope::None;  // an odd d_k without RoPE is fine
  REQUIRE_NOTHROW(attn::AttentionLayer(config_of(g)));
  g.head_dim = 6;
  g.rope = Rope::RotateHalf;
  attn::LayerConfig c = config_of(g);
  c.rope.base = 0;
  REQUIRE_THROWS_WITH(attn::AttentionLayer(c), ContainsSubstring("RoPE base (rope_theta) must be "
                                                                 "a finite number above 0, got 0"));
  c.rope.base = 1e4;
  c.rope.frequencies = {1.0, 0.5};
  REQUIRE_THROWS_WITH(attn::AttentionLayer(c),
                      ContainsSubstring("expected one per pair of dimensions, d_k / 2 = 3, got 2"));
  c.rope.frequencies = {1.0, std::numeric_limits<double>::quiet_NaN(), 0.1};
  REQUIRE_THROWS_WITH(attn::AttentionLayer(c), ContainsSubstring("RoPE frequency θ_1 must be "
                                                                 "finite"));
  c.rope.frequencies.clear();
  c.positional = attn::PositionalKind::None;  // a rotate-half spec without RoPE
  REQUIRE_THROWS_WITH(attn::AttentionLayer(c),
                      ContainsSubstring("a RoPE pairing, base or frequencies was given, but "
                                        "positional is 'none'"));

  // Weights of the wrong shape for the grouped layout, and an out_proj.bias it does not have.
  g.out_bias = false;
  attn::AttentionLayer layer(config_of(g));
  auto w = layer.weights();
  REQUIRE(w.out_proj_bias.empty());
  w.in_proj_weight.resize(3 * 24 * 20);  // the multi-head size
  REQUIRE_THROWS_WITH(layer.set_weights(w),
                      ContainsSubstring("in_proj_weight has 1440 values, expected [48, 20] = 960"));
  w = layer.weights();
  w.out_proj_bias.assign(20, 0.0f);
  REQUIRE_THROWS_WITH(layer.set_weights(w),
                      ContainsSubstring("out_proj.bias was given, but the layer was created "
                                        "without an output bias (outBias: false)"));
}
