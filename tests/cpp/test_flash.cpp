// Tests of flash_attention (the output-only path) and the fused, block-skipping materialising
// path of scaled_dot_product_attention against the scalar reference, for every mask kind.
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

#include "approx.hpp"
#include "attention/ops/flash.hpp"
#include "attention/ops/masks.hpp"
#include "attention/ops/sdpa.hpp"

namespace {

struct Case {
  std::string name;
  attn::MaskSpec mask;
  bool alibi = false;
};

// Every mask kind, with and without holes, plus ALiBi; built for n queries and kv_n keys.
std::vector<Case> cases_for(std::size_t n, std::size_t kv_n) {
  std::vector<Case> cases;
  auto add = [&](std::string name, attn::MaskSpec mask, bool alibi = false) {
    cases.push_back({std::move(name), std::move(mask), alibi});
  };
  add("none", {});
  add("none + alibi", {}, true);
  attn::MaskSpec causal;
  causal.kind = attn::MaskKind::Causal;
  add("causal", causal);
  add("causal + alibi", causal, true);
  for (std::size_t window : {1u, 5u, 40u}) {
    attn::MaskSpec sliding;
    sliding.kind = attn::MaskKind::SlidingWindow;
    sliding.window = window;
    add("sliding window " + std::to_string(window), sliding);
  }
  for (std::size_t prefix : {0u, 3u, 70u}) {
    attn::MaskSpec prefix_lm;
    prefix_lm.kind = attn::MaskKind::PrefixLM;
    prefix_lm.prefix = prefix;
    add("prefix-lm " + std::to_string(prefix), prefix_lm);
  }
  attn::MaskSpec padding;
  padding.key_padding.assign(kv_n, 0);
  for (std::size_t j = 0; j < kv_n; j += 3) padding.key_padding[j] = 1;
  add("key padding", padding);
  attn::MaskSpec padded_causal = padding;
  padded_causal.kind = attn::MaskKind::Causal;
  add("key padding + causal (query 0 sees nothing)", padded_causal, true);
  attn::MaskSpec all_padded;
  all_padded.key_padding.assign(kv_n, 1);
  add("every key padded", all_padded);
  attn::MaskSpec cells;
  cells.cells.assign(n * kv_n, 0);
  for (std::size_t c = 0; c < n * kv_n; c += 7) cells.cells[c] = 1;
  for (std::size_t j = 0; j < kv_n; ++j) cells.cells[(n / 2) * kv_n + j] = 1;  // a hidden row
  add("cells with a fully hidden query", cells);
  attn::MaskSpec window_cells = cells;
  window_cells.kind = attn::MaskKind::SlidingWindow;
  window_cells.window = 9;
  add("sliding window 9 + cells", window_cells);
  return cases;
}

struct Head {
  std::size_t n, kv_n, dk, dv;
  std::vector<float> q, k, v;
};

Head random_head(std::size_t n, std::size_t kv_n, std::size_t dk, std::size_t dv,
                 std::uint32_t seed) {
  return {n,
          kv_n,
          dk,
          dv,
          random_floats(n * dk, seed, 1.5),
          random_floats(kv_n * dk, seed + 1, 1.5),
          random_floats(kv_n * dv, seed + 2)};
}

void check_head(const Head& h, const Case& c, const std::string& where) {
  const float scale = float(1.0 / std::sqrt(double(h.dk)));
  const float slope = c.alibi ? 0.25f : 0.0f;
  const attn::ConstMatView q(h.q.data(), h.n, h.dk), k(h.k.data(), h.kv_n, h.dk),
      v(h.v.data(), h.kv_n, h.dv);
  std::vector<float> want_w(h.n * h.kv_n), want_c(h.n * h.dv);
  attn::reference::attention_head(q, k, v, scale, slope, &c.mask,
                                  attn::MatView(want_w.data(), h.n, h.kv_n),
                                  attn::MatView(want_c.data(), h.n, h.dv));
  attn::LogitParams params;
  params.scale = scale;
  params.alibi = c.alibi;
  params.alibi_slope = slope;
  params.mask = &c.mask;
  const std::string what = where + " " + c.name;

  // Flash: context only, written into a strided view (as into one head's slice of concat).
  std::vector<float> flash_store(h.n * (h.dv + 3), 42.0f);
  attn::FlashWorkspace flash_ws;
  attn::flash_attention(q, k, v, params, attn::MatView(flash_store.data(), h.n, h.dv, h.dv + 3),
                        flash_ws);
  std::vector<float> flash_c;
  for (std::size_t i = 0; i < h.n; ++i) {
    for (std::size_t c2 = 0; c2 < h.dv; ++c2) flash_c.push_back(flash_store[i * (h.dv + 3) + c2]);
    for (std::size_t c2 = h.dv; c2 < h.dv + 3; ++c2)
      REQUIRE(flash_store[i * (h.dv + 3) + c2] == 42.0f);
  }
  require_close(flash_c, want_c, 2e-6, 2e-5, "flash context, " + what);

  // Materialising (fused, block-skipping): weights and context.
  std::vector<float> got_w(h.n * h.kv_n, 7.0f), got_c(h.n * h.dv, 7.0f);
  attn::SdpaWorkspace ws;
  attn::scaled_dot_product_attention(q, k, v, params, attn::MatView(got_w.data(), h.n, h.kv_n),
                                     attn::MatView(got_c.data(), h.n, h.dv), ws);
  require_close(got_w, want_w, 1e-6, 2e-5, "weights, " + what);
  require_close(got_c, want_c, 2e-6, 2e-5, "context, " + what);
  for (std::size_t i = 0; i < h.n; ++i) {
    for (std::size_t j = 0; j < h.kv_n; ++j) {
      if (!attn::is_visible(c.mask, i, j, h.kv_n)) {
        INFO(what << " query " << i << " key " << j);
        REQUIRE(got_w[i * h.kv_n + j] == 0.0f);  // exactly zero, not tiny
      }
    }
  }
  // Flash and materialising agree closely with each other too.
  require_close(flash_c, got_c, 2e-6, 2e-5, "flash vs materialising, " + what);
}

}  // namespace

TEST_CASE("flash and fused attention equal the reference for every mask kind and tile edge",
          "[flash]") {
  std::uint32_t seed = 500;
  for (std::size_t n : {1u, 15u, 16u, 17u, 31u, 32u, 33u, 63u, 64u, 65u, 127u, 128u, 129u}) {
    const Head h = random_head(n, n, 16, 16, seed += 3);
    for (const Case& c : cases_for(n, n)) check_head(h, c, "self n=" + std::to_string(n));
  }
}

TEST_CASE("flash and fused attention: head sizes, cross-attention with kv_n != n", "[flash]") {
  std::uint32_t seed = 900;
  const std::size_t shapes[][4] = {{5, 70, 1, 1},     {70, 5, 3, 5},   {33, 129, 8, 8},
                                   {129, 33, 64, 64}, {65, 97, 17, 9}, {1, 200, 64, 32}};
  for (const auto& s : shapes) {
    const Head h = random_head(s[0], s[1], s[2], s[3], seed += 3);
    const std::string where = "n=" + std::to_string(s[0]) + " kv_n=" + std::to_string(s[1]) +
                              " dk=" + std::to_string(s[2]) + " dv=" + std::to_string(s[3]);
    for (const Case& c : cases_for(s[0], s[1])) check_head(h, c, where);
  }
}

TEST_CASE("flash: logits of ±1e4 stay finite and pick the maximum", "[flash]") {
  // Two keys per query; q·k = ±1e4 through a 1-wide head with scale 1.
  const std::vector<float> q = {1.0f, -1.0f, 1.0f};
  const std::vector<float> k = {1e4f, -1e4f, 9990.0f};
  const std::vector<float> v = {1.0f, 2.0f, 3.0f};
  std::vector<float> out(3);
  attn::LogitParams params;
  attn::FlashWorkspace ws;
  attn::flash_attention(attn::ConstMatView(q.data(), 3, 1), attn::ConstMatView(k.data(), 3, 1),
                        attn::ConstMatView(v.data(), 3, 1), params, attn::MatView(out.data(), 3, 1),
                        ws);
  const double runner_up = std::exp(-10.0);
  REQUIRE(std::abs(out[0] - (1.0 + 3.0 * runner_up) / (1.0 + runner_up)) <= 1e-6);
  REQUIRE(out[1] == 2.0f);  // -1e4 · (-1) = 1e4 wins alone; the others are e^{-2e4} = 0
  REQUIRE(std::abs(out[2] - out[0]) <= 1e-6);
}

TEST_CASE("skipping masked blocks changes nothing: causal equals the same mask given as cells",
          "[flash]") {
  // Causal skips key blocks and A·V ranges; the same pattern as explicit cells cannot skip.
  // The materialising path must give bit-identical weights and context.
  for (std::size_t n : {17u, 64u, 100u}) {
    const Head h = random_head(n, n, 24, 24, 77 + std::uint32_t(n));
    attn::MaskSpec causal;
    causal.kind = attn::MaskKind::Causal;
    attn::MaskSpec cells;
    cells.cells.assign(n * n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = i + 1; j < n; ++j) cells.cells[i * n + j] = 1;
    }
    std::vector<float> w1(n * n), c1(n * 24), w2(n * n), c2(n * 24);
    attn::SdpaWorkspace ws;
    attn::LogitParams params;
    params.scale = 0.2f;
    params.alibi = true;
    params.alibi_slope = 0.125f;
    const attn::ConstMatView q(h.q.data(), n, 24), k(h.k.data(), n, 24), v(h.v.data(), n, 24);
    params.mask = &causal;
    attn::scaled_dot_product_attention(q, k, v, params, attn::MatView(w1.data(), n, n),
                                       attn::MatView(c1.data(), n, 24), ws);
    params.mask = &cells;
    attn::scaled_dot_product_attention(q, k, v, params, attn::MatView(w2.data(), n, n),
                                       attn::MatView(c2.data(), n, 24), ws);
    INFO("n=" << n);
    REQUIRE(w1 == w2);
    REQUIRE(c1 == c2);
  }
}

TEST_CASE("visible_keys gives each kind's range, never shrinking from the left", "[masks]") {
  attn::MaskSpec spec;
  for (auto kind : {attn::MaskKind::None, attn::MaskKind::Causal, attn::MaskKind::SlidingWindow,
                    attn::MaskKind::PrefixLM}) {
    spec.kind = kind;
    spec.window = 4;
    spec.prefix = 6;
    for (std::size_t kv_n : {1u, 9u, 20u}) {
      attn::KeyRange last{0, 0};
      for (std::size_t i = 0; i < 25; ++i) {
        const attn::KeyRange r = attn::visible_keys(spec, i, kv_n);
        REQUIRE(r.begin >= last.begin);
        REQUIRE(r.end >= last.end);
        last = r;
        for (std::size_t j = 0; j < kv_n; ++j) {
          INFO(attn::mask_kind_name(kind) << " i=" << i << " j=" << j << " kv_n=" << kv_n);
          REQUIRE((j >= r.begin && j < r.end) == attn::is_visible(spec, i, j, kv_n));
        }
      }
    }
  }
}
