// EmbeddingTable (rows kept between lookups) against embed_tokens, which draws every row anew.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "attention/error.hpp"
#include "attention/ops/embedding.hpp"
#include "attention/tensor.hpp"

namespace {

attn::Matrix drawn_anew(const std::vector<std::uint32_t>& ids, std::uint32_t seed, std::size_t d) {
  attn::Matrix out(ids.size(), d);
  attn::embed_tokens(ids, seed, out);
  return out;
}

attn::Matrix looked_up(attn::EmbeddingTable& table, const std::vector<std::uint32_t>& ids,
                       std::size_t d) {
  attn::Matrix out(ids.size(), d, -1.0f);
  table.lookup(ids, out);
  return out;
}

bool same_bits(const attn::Matrix& a, const attn::Matrix& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a.data()[i] != b.data()[i]) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("EmbeddingTable gives embed_tokens' rows, drawn or kept", "[embedding]") {
  constexpr std::size_t d = 24;
  const std::vector<std::uint32_t> ids = {5, 9, 5, 65535, 0, 9};
  attn::EmbeddingTable table(42, d);
  const attn::Matrix reference = drawn_anew(ids, 42, d);
  REQUIRE(same_bits(looked_up(table, ids, d), reference));
  REQUIRE(table.cached_rows() == 4);  // 5, 9, 65535, 0
  // Everything kept now: the same numbers again, and nothing more cached.
  REQUIRE(same_bits(looked_up(table, ids, d), reference));
  REQUIRE(table.cached_rows() == 4);
  // Rows depend on the id (and only on it): repeats are equal, different ids are not.
  REQUIRE(std::equal(reference.row(0), reference.row(0) + d, reference.row(2)));
  REQUIRE_FALSE(std::equal(reference.row(0), reference.row(0) + d, reference.row(1)));
  // Another seed is another table.
  attn::EmbeddingTable other(7, d);
  REQUIRE(same_bits(looked_up(other, ids, d), drawn_anew(ids, 7, d)));
  REQUIRE_FALSE(same_bits(looked_up(other, ids, d), reference));
}

TEST_CASE("EmbeddingTable starts over when full and stays exact", "[embedding]") {
  constexpr std::size_t d = 16;
  attn::EmbeddingTable table(3, d, 3 * d);  // room for three rows
  std::vector<std::uint32_t> ids;
  for (std::uint32_t i = 0; i < 40; ++i) ids.push_back((i * 7919U) % 11U);  // 11 ids, repeated
  REQUIRE(same_bits(looked_up(table, ids, d), drawn_anew(ids, 3, d)));
  REQUIRE(table.cached_rows() <= 3);
  REQUIRE(same_bits(looked_up(table, ids, d), drawn_anew(ids, 3, d)));
}

TEST_CASE("EmbeddingTable refuses bad lookups and keeps working", "[embedding][errors]") {
  constexpr std::size_t d = 8;
  attn::EmbeddingTable table(42, d);
  attn::Matrix out(2, d);
  REQUIRE_THROWS_WITH(table.lookup(std::vector<std::uint32_t>{1, 65536}, out),
                      Catch::Matchers::ContainsSubstring(
                          "token id 65536 at position 1 is outside the vocabulary [0, 65536)"));
  REQUIRE(table.cached_rows() == 0);  // checked before anything is drawn
  REQUIRE_THROWS_WITH(table.lookup(std::vector<std::uint32_t>{1, 2, 3}, out),
                      Catch::Matchers::ContainsSubstring("expected one per token: 3"));
  attn::Matrix narrow(2, d - 1);
  REQUIRE_THROWS_WITH(table.lookup(std::vector<std::uint32_t>{1, 2}, narrow),
                      Catch::Matchers::ContainsSubstring("expected d_model = 8"));
  REQUIRE(same_bits(looked_up(table, {1, 2}, d), drawn_anew({1, 2}, 42, d)));
}
