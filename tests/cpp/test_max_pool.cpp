// max_pool (vectorized) against max_pool_reference and against the blocks' maxima; the
// forward's preview against max-pooling its own attention weights.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include "approx.hpp"
#include "attention/error.hpp"
#include "attention/layer/layer.hpp"
#include "attention/ops/max_pool.hpp"
#include "attention/tensor.hpp"

using Catch::Matchers::ContainsSubstring;

TEST_CASE("max_pool equals the reference and each block's largest value", "[max_pool]") {
  for (const auto [rows, cols, step] : std::vector<std::array<std::size_t, 3>>{
           {1, 1, 1}, {5, 7, 1}, {7, 7, 3}, {16, 16, 4}, {17, 33, 4}, {9, 40, 16}, {3, 5, 8}}) {
    // A wider buffer than the matrix: the view's stride is exercised too.
    const auto data = random_floats(rows * (cols + 3), static_cast<unsigned>(rows * 100 + cols));
    const attn::ConstMatView in(data.data(), rows, cols, cols + 3);
    const std::size_t pr = attn::pooled_size(rows, step);
    const std::size_t pc = attn::pooled_size(cols, step);
    attn::Matrix fast(pr, pc), reference(pr, pc);
    attn::max_pool(in, step, fast);
    attn::max_pool_reference(in, step, reference);
    INFO(rows << " x " << cols << " by " << step);
    for (std::size_t i = 0; i < pr; ++i) {
      for (std::size_t j = 0; j < pc; ++j) {
        float best = -1e30f;
        for (std::size_t r = i * step; r < std::min(rows, (i + 1) * step); ++r) {
          for (std::size_t c = j * step; c < std::min(cols, (j + 1) * step); ++c) {
            best = std::max(best, in.row(r)[c]);
          }
        }
        REQUIRE(fast(i, j) == best);
        REQUIRE(reference(i, j) == best);
      }
    }
  }
}

TEST_CASE("the forward's preview is every head's weights max-pooled, with or without them",
          "[max_pool][layer]") {
  attn::AttentionLayer layer(attn::LayerConfig{.d_model = 32, .heads = 4, .seed = 3});
  const std::size_t n = 23;
  const auto x = random_floats(n * 32, 9);
  for (const auto mask : {attn::MaskKind::None, attn::MaskKind::Causal}) {
    attn::ForwardOptions options;
    options.n = n;
    options.mask.kind = mask;
    const attn::ForwardResult full = layer.forward(x, options);  // weights [4, 23, 23]
    REQUIRE(full.preview.values.empty());
    options.preview_side = 8;  // step ceil(23 / 8) = 3: 8 × 8 cells, the last ones partial
    options.want_weights = false;
    const attn::ForwardResult& pooled = layer.forward(x, options);
    REQUIRE(pooled.attention.empty());
    REQUIRE(pooled.preview.step == 3);
    REQUIRE(pooled.preview.rows == 8);
    REQUIRE(pooled.preview.cols == 8);
    for (std::size_t h = 0; h < 4; ++h) {
      attn::Matrix want(8, 8);
      attn::max_pool_reference(attn::ConstMatView(full.attention.data() + h * n * n, n, n), 3,
                               want);
      const std::vector<float> got(pooled.preview.values.begin() + h * 64,
                                   pooled.preview.values.begin() + (h + 1) * 64);
      REQUIRE(got == std::vector<float>(want.data(), want.data() + 64));
    }
    // The output is the weights path's (the preview needs the weights, not the flash path).
    require_close(values(pooled.output), values(full.output), 0, 0, "output with a preview");
  }
}

TEST_CASE("a preview side is bounded and the preview's size checked", "[max_pool][layer][errors]") {
  attn::LayerConfig config;
  config.d_model = 16;
  config.heads = 2;
  attn::AttentionLayer layer(config);
  const auto x = random_floats(4 * 16, 1);
  attn::ForwardOptions options;
  options.n = 4;
  options.preview_side = 65537;
  REQUIRE_THROWS_WITH(
      layer.forward(x, options),
      ContainsSubstring("preview must be a side of at most 65536 cells, got 65537"));
  options.preview_side = 2;  // step 2: 2 × 2 cells per head
  const auto& r = layer.forward(x, options);
  REQUIRE(r.preview.values.size() == 2 * 2 * 2);
}
