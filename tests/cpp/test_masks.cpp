// Tests of the mask kinds against grids written out by hand, and their validation errors.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/ops/masks.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {
// The visibility grid as rows of '1' (visible) and '.' (hidden).
std::vector<std::string> grid(const attn::MaskSpec& spec, std::size_t n, std::size_t kv_n) {
  std::vector<std::uint8_t> visible;
  attn::build_visibility(spec, n, kv_n, visible);
  std::vector<std::string> rows(n, std::string(kv_n, '.'));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < kv_n; ++j) rows[i][j] = visible[i * kv_n + j] ? '1' : '.';
  }
  return rows;
}
attn::MaskSpec of_kind(attn::MaskKind kind) {
  attn::MaskSpec spec;
  spec.kind = kind;
  return spec;
}
}  // namespace

TEST_CASE("causal hides the future, top-left aligned for cross-attention", "[masks]") {
  const auto spec = of_kind(attn::MaskKind::Causal);
  REQUIRE(grid(spec, 4, 4) == std::vector<std::string>{"1...", "11..", "111.", "1111"});
  REQUIRE(grid(spec, 2, 4) == std::vector<std::string>{"1...", "11.."});
  REQUIRE(grid(spec, 4, 2) == std::vector<std::string>{"1.", "11", "11", "11"});
}

TEST_CASE("sliding window sees itself and window-1 keys before it", "[masks]") {
  auto spec = of_kind(attn::MaskKind::SlidingWindow);
  spec.window = 2;
  REQUIRE(grid(spec, 5, 5) ==
          std::vector<std::string>{"1....", "11...", ".11..", "..11.", "...11"});
  spec.window = 0;
  REQUIRE_THROWS_WITH(grid(spec, 3, 3), ContainsSubstring("window >= 1"));
}

TEST_CASE("prefix-LM: the prefix is bidirectional, the rest causal", "[masks]") {
  auto spec = of_kind(attn::MaskKind::PrefixLM);
  spec.prefix = 2;
  REQUIRE(grid(spec, 4, 4) == std::vector<std::string>{"11..", "11..", "111.", "1111"});
  spec.prefix = 0;
  REQUIRE(grid(spec, 3, 3) == grid(of_kind(attn::MaskKind::Causal), 3, 3));
}

TEST_CASE("key padding and explicit cells combine with any kind", "[masks]") {
  auto spec = of_kind(attn::MaskKind::Causal);
  spec.key_padding = {0, 0, 1};
  spec.cells = {0, 0, 0,  //
                1, 0, 0,  //
                0, 0, 0};
  REQUIRE(grid(spec, 3, 3) == std::vector<std::string>{"1..", ".1.", "11."});
  REQUIRE(attn::masks_anything(spec));
  REQUIRE_FALSE(attn::masks_anything(attn::MaskSpec{}));
  attn::MaskSpec only_zeros;
  only_zeros.key_padding = {0, 0};
  REQUIRE_FALSE(attn::masks_anything(only_zeros));
}

TEST_CASE("mask errors name the problem and the expected value", "[masks]") {
  attn::MaskSpec spec;
  spec.key_padding = {0, 1};
  REQUIRE_THROWS_WITH(attn::validate_mask(spec, 3, 3),
                      ContainsSubstring("keyPadding has 2 entries") && ContainsSubstring("3"));
  spec.key_padding.clear();
  spec.cells = {0, 0, 0};
  REQUIRE_THROWS_WITH(attn::validate_mask(spec, 2, 3), ContainsSubstring("2 * 3 = 6"));
  REQUIRE_THROWS_AS(attn::parse_mask_kind("diagonal"), attn::Error);
  REQUIRE_THROWS_WITH(attn::parse_mask_kind("diagonal"),
                      ContainsSubstring("'diagonal'") && ContainsSubstring("'prefix-lm'"));
  for (auto kind : {attn::MaskKind::None, attn::MaskKind::Causal, attn::MaskKind::SlidingWindow,
                    attn::MaskKind::PrefixLM}) {
    REQUIRE(attn::parse_mask_kind(attn::mask_kind_name(kind)) == kind);
  }
}
