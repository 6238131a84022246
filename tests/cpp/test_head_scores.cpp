// Tests for the head diagnostics: hand-made attention patterns with known scores, uniform
// causal attention against its closed form, an independent reference, and the induction probe.
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "attention/error.hpp"
#include "attention/train/head_scores.hpp"

using attn::Batch;
using attn::HeadScores;
using Catch::Approx;
using Catch::Matchers::ContainsSubstring;

namespace {

// weights [batch, heads, n, n] for one head pattern: row i puts weight 1 on key pick(i), or
// spreads it with the given function of (i, j).
std::vector<float> pattern(
    const Batch& probe, std::size_t heads,
    const std::function<float(std::size_t, std::size_t, std::size_t, std::size_t)>& weight) {
  const std::size_t n = probe.n;
  std::vector<float> w(probe.batch * heads * n * n, 0.f);
  for (std::size_t b = 0; b < probe.batch; ++b) {
    for (std::size_t h = 0; h < heads; ++h) {
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j <= i; ++j)
          w[((b * heads + h) * n + i) * n + j] = weight(b, h, i, j);
      }
    }
  }
  return w;
}

Batch probe_of(std::vector<std::int32_t> ids, std::size_t batch = 1) {
  Batch probe;
  probe.batch = batch;
  probe.n = ids.size() / batch;
  probe.ids = std::move(ids);
  probe.targets.assign(probe.ids.size(), -1);
  return probe;
}

// The scores straight from their definitions, phrased differently from the core: for each
// query, the set of keys in each category is built first (std::set), then its weights summed.
std::vector<HeadScores> reference_scores(const std::vector<float>& w, std::size_t heads,
                                         const Batch& probe) {
  const std::size_t n = probe.n;
  std::vector<HeadScores> out(heads);
  for (std::size_t h = 0; h < heads; ++h) {
    std::map<int, std::vector<double>> values;  // 0 previous, 1 induction, 2 same, 3 first
    for (std::size_t b = 0; b < probe.batch; ++b) {
      const auto A = [&](std::size_t i, std::size_t j) {
        return static_cast<double>(w[((b * heads + h) * n + i) * n + j]);
      };
      const auto id = [&](std::size_t i) { return probe.ids[b * n + i]; };
      for (std::size_t i = 1; i < n; ++i) {
        values[0].push_back(A(i, i - 1));
        values[3].push_back(A(i, 0));
        std::set<std::size_t> same, successors;
        for (std::size_t j = 0; j < i; ++j) {
          if (id(j) == id(i)) same.insert(j);
        }
        for (const std::size_t j : same) {
          if (j + 1 < i) successors.insert(j + 1);
        }
        double s = 0.0, t = 0.0;
        for (const std::size_t j : same) s += A(i, j);
        for (const std::size_t j : successors) t += A(i, j);
        if (!same.empty()) values[2].push_back(s);
        if (!successors.empty()) values[1].push_back(t);
      }
    }
    const auto mean = [&](int k) {
      const auto& v = values[k];
      if (v.empty()) return std::nan("");
      double sum = 0.0;
      for (const double x : v) sum += x;
      return sum / static_cast<double>(v.size());
    };
    out[h] = {mean(0), mean(1), mean(2), mean(3)};
  }
  return out;
}

}  // namespace

TEST_CASE("a pure previous-token head scores 1 on previous-token, about 0 elsewhere",
          "[head_scores]") {
  const std::size_t half = 20;
  const Batch probe = attn::induction_probe(1, half, 64);
  const std::size_t n = probe.n;
  const auto w = pattern(probe, 1, [](auto, auto, std::size_t i, std::size_t j) {
    return static_cast<float>(i == 0 ? j == 0 : j + 1 == i);
  });
  const HeadScores s = attn::head_scores(w, 1, probe)[0];
  CHECK(s.previous_token == 1.0);
  CHECK(s.induction == 0.0);
  CHECK(s.same_token == 0.0);
  CHECK(s.first_token == Approx(1.0 / static_cast<double>(n - 1)));  // query 1's previous is 0
}

TEST_CASE("a perfect induction head scores 1 on induction", "[head_scores]") {
  const std::size_t half = 12;
  const Batch probe = attn::induction_probe(2, half, 64, 3);
  // In the repeat, attend to the token after the earlier occurrence; before it, to itself.
  const auto w = pattern(probe, 1, [&](auto, auto, std::size_t i, std::size_t j) {
    return static_cast<float>(i < half ? j == i : j == i - half + 1);
  });
  const HeadScores s = attn::head_scores(w, 1, probe)[0];
  CHECK(s.induction == 1.0);
  CHECK(s.same_token == 0.0);
  CHECK(s.previous_token == 0.0);
  CHECK(s.first_token == 0.0);
}

TEST_CASE("a head that attends to the earlier copy scores 1 on same-token", "[head_scores]") {
  const std::size_t half = 8;
  const Batch probe = attn::induction_probe(3, half, 64);
  const auto w = pattern(probe, 1, [&](auto, auto, std::size_t i, std::size_t j) {
    return static_cast<float>(i < half ? j == 0 : j == i - half);
  });
  const HeadScores s = attn::head_scores(w, 1, probe)[0];
  CHECK(s.same_token == 1.0);
  CHECK(s.induction == 0.0);
  // Queries 1 .. half-1 look at position 0, and so does query half (its copy is at 0).
  CHECK(s.first_token == Approx(static_cast<double>(half) / static_cast<double>(2 * half - 1)));
  CHECK(s.previous_token == Approx(1.0 / static_cast<double>(2 * half - 1)));  // query 1
}

TEST_CASE("uniform causal attention gives the closed-form scores", "[head_scores]") {
  // A[i, j] = 1 / (i + 1). On the probe each repeat query i in [h, 2h) has one earlier copy
  // (at i - h) and one successor (at i - h + 1 < i), each holding 1 / (i + 1).
  for (const std::size_t half : {2u, 5u, 31u}) {
    const Batch probe = attn::induction_probe(4, half, 100, 2);
    const std::size_t n = probe.n;
    const auto w = pattern(
        probe, 2, [](auto, auto, std::size_t i, auto) { return 1.0f / static_cast<float>(i + 1); });
    double all = 0.0;  // mean over i >= 1 of 1 / (i + 1)
    for (std::size_t i = 1; i < n; ++i) all += 1.0 / static_cast<double>(i + 1);
    all /= static_cast<double>(n - 1);
    double repeat = 0.0;  // mean over i in [h, 2h) of 1 / (i + 1)
    for (std::size_t i = half; i < n; ++i) repeat += 1.0 / static_cast<double>(i + 1);
    repeat /= static_cast<double>(half);
    for (const HeadScores& s : attn::head_scores(w, 2, probe)) {
      CHECK(s.previous_token == Approx(all).epsilon(1e-6));
      CHECK(s.first_token == Approx(all).epsilon(1e-6));
      CHECK(s.same_token == Approx(repeat).epsilon(1e-6));
      CHECK(s.induction == Approx(repeat).epsilon(1e-6));
    }
  }
}

TEST_CASE("heads and sequences are told apart", "[head_scores]") {
  const std::size_t half = 10;
  const Batch probe = attn::induction_probe(5, half, 64, 2);
  // Head 0 previous-token, head 1 induction, head 2 first-token.
  const auto w = pattern(probe, 3, [&](auto, std::size_t h, std::size_t i, std::size_t j) {
    if (h == 0) return static_cast<float>(i == 0 ? j == 0 : j + 1 == i);
    if (h == 1) return static_cast<float>(i < half ? j == i : j == i - half + 1);
    return static_cast<float>(j == 0);
  });
  const auto s = attn::head_scores(w, 3, probe);
  REQUIRE(s.size() == 3);
  CHECK(s[0].previous_token == 1.0);
  CHECK(s[1].induction == 1.0);
  CHECK(s[2].first_token == 1.0);
  CHECK(s[2].induction == 0.0);
}

TEST_CASE("head scores match an independent reference on random attention", "[head_scores]") {
  // Repeated tokens in the first half (vocab 3), so queries have several earlier copies,
  // successors that coincide with copies, and adjacent repeats (successor = the query itself).
  std::mt19937 gen(12345);
  std::uniform_int_distribution<int> token(0, 2);
  std::normal_distribution<float> logit(0.f, 2.f);
  const std::size_t batch = 3, heads = 4, n = 17;
  std::vector<std::int32_t> ids(batch * n);
  for (auto& id : ids) id = token(gen);
  const Batch probe = probe_of(ids, batch);
  std::vector<float> w(batch * heads * n * n, 0.f);
  for (std::size_t row = 0; row < batch * heads * n; ++row) {
    const std::size_t i = row % n;
    double sum = 0.0;
    std::vector<double> e(i + 1);
    for (std::size_t j = 0; j <= i; ++j) sum += e[j] = std::exp(logit(gen));
    for (std::size_t j = 0; j <= i; ++j) w[row * n + j] = static_cast<float>(e[j] / sum);
  }
  const auto got = attn::head_scores(w, heads, probe);
  const auto want = reference_scores(w, heads, probe);
  for (std::size_t h = 0; h < heads; ++h) {
    CHECK(got[h].previous_token == Approx(want[h].previous_token).epsilon(1e-12));
    CHECK(got[h].induction == Approx(want[h].induction).epsilon(1e-12));
    CHECK(got[h].same_token == Approx(want[h].same_token).epsilon(1e-12));
    CHECK(got[h].first_token == Approx(want[h].first_token).epsilon(1e-12));
  }
}

TEST_CASE("several earlier copies: all their successors count", "[head_scores]") {
  // ids a b a b a: query 4 (a) has copies at 0 and 2, successors 1 and 3.
  const Batch probe = probe_of({0, 1, 0, 1, 0});
  const auto w = pattern(probe, 1, [](auto, auto, std::size_t i, std::size_t j) {
    if (i == 4) return static_cast<float>(j == 1 || j == 3) * 0.5f;
    return static_cast<float>(j == i);
  });
  const HeadScores s = attn::head_scores(w, 1, probe)[0];
  // Queries with successors: 2 (copy 0, successor 1), 3 (copy 1, successor 2), 4 (1 and 3).
  CHECK(s.induction == Approx((0.0 + 0.0 + 1.0) / 3.0));
  // Queries with copies: 2, 3 and 4; query 4 puts nothing on 0 or 2.
  CHECK(s.same_token == 0.0);
}

TEST_CASE("a score the probe cannot measure is NaN", "[head_scores]") {
  const Batch probe = probe_of({0, 1, 2, 3});  // no token repeats
  const auto w = pattern(
      probe, 1, [](auto, auto, std::size_t i, auto) { return 1.0f / static_cast<float>(i + 1); });
  const HeadScores s = attn::head_scores(w, 1, probe)[0];
  CHECK(std::isnan(s.induction));
  CHECK(std::isnan(s.same_token));
  CHECK(s.previous_token == Approx((1.0 / 2 + 1.0 / 3 + 1.0 / 4) / 3));
  // "aa": query 1's copy is at 0 but its successor would be the query itself.
  const Batch pair = probe_of({5, 5});
  const auto w2 = pattern(
      pair, 1, [](auto, auto, std::size_t i, auto) { return 1.0f / static_cast<float>(i + 1); });
  const HeadScores t = attn::head_scores(w2, 1, pair)[0];
  CHECK(std::isnan(t.induction));
  CHECK(t.same_token == 0.5);
}

TEST_CASE("head scores reject shapes that disagree", "[head_scores]") {
  const Batch probe = attn::induction_probe(1, 4, 16, 2);  // n = 8
  const std::vector<float> w(2 * 3 * 8 * 8, 0.f);
  CHECK(attn::head_scores(w, 3, probe).size() == 3);
  CHECK_THROWS_WITH(attn::head_scores(w, 2, probe),
                    ContainsSubstring("attention weights have 384 values, expected batch * heads "
                                      "* n * n = 2 * 2 * 8 * 8 = 256"));
  CHECK_THROWS_WITH(attn::head_scores(w, 0, probe), ContainsSubstring("got 0"));
  Batch bad = probe;
  bad.ids.pop_back();
  CHECK_THROWS_WITH(attn::head_scores(w, 3, bad), ContainsSubstring("the probe has 15 ids"));
  const Batch one = probe_of({3});
  CHECK_THROWS_WITH(attn::head_scores(std::vector<float>(1, 1.f), 1, one),
                    ContainsSubstring("at least 2 tokens"));
}

TEST_CASE("the induction probe: random tokens, then their repeat, deterministic", "[head_scores]") {
  const Batch a = attn::induction_probe(9, 6, 10, 4);
  const Batch b = attn::induction_probe(9, 6, 10, 4);
  const Batch c = attn::induction_probe(10, 6, 10, 4);
  CHECK(a.ids == b.ids);
  CHECK(a.ids != c.ids);
  CHECK(a.batch == 4);
  CHECK(a.n == 12);
  for (std::size_t s = 0; s < a.batch; ++s) {
    const std::int32_t* ids = a.ids.data() + s * 12;
    const std::int32_t* targets = a.targets.data() + s * 12;
    CHECK(std::set<std::int32_t>(ids, ids + 6).size() == 6);  // distinct: vocab 10 >= 6
    for (std::size_t i = 0; i < 12; ++i) {
      CHECK(ids[i] >= 0);
      CHECK(ids[i] < 10);
      if (i >= 6) CHECK(ids[i] == ids[i - 6]);
      CHECK(targets[i] == (i >= 6 && i < 11 ? ids[i + 1] : -1));
    }
  }
  // A vocabulary smaller than the half: tokens repeat, still in range.
  const Batch small = attn::induction_probe(1, 20, 3);
  for (const std::int32_t id : small.ids) CHECK((id >= 0 && id < 3));
  CHECK_THROWS_WITH(attn::induction_probe(1, 1, 10), ContainsSubstring("at least 2, got 1"));
  // A real checkpoint's vocabulary (Qwen2.5's 151 936, Gemma 3's 262 144): distinct tokens in range
  for (const std::size_t vocab : {std::size_t{151936}, std::size_t{262144}}) {
    const Batch large = attn::induction_probe(2022, 25, vocab, 1);
    std::set<std::int32_t> first(large.ids.begin(), large.ids.begin() + 25);
    CHECK(first.size() == 25);
    for (const std::int32_t id : large.ids) CHECK((id >= 0 && std::size_t(id) < vocab));
    for (std::size_t i = 25; i < 50; ++i) CHECK(large.ids[i] == large.ids[i - 25]);
  }
  CHECK_THROWS_WITH(attn::induction_probe(1, 4, 1), ContainsSubstring("vocabulary of 2 to"));
  CHECK_THROWS_WITH(attn::induction_probe(1, 4, (std::size_t{1} << 20) + 1),
                    ContainsSubstring("vocabulary of 2 to 1048576 tokens"));
  CHECK_THROWS_AS(attn::induction_probe(1, 4, 10, 0), attn::Error);
  CHECK_THROWS_AS(attn::induction_probe(1, std::size_t{1} << 40, 10), attn::Error);
}
