// The next-token readout (next_tokens.hpp) against a float64 softmax written here, and a
// checkpoint's default probe (probe.hpp): one sequence of 25 tokens and their repeat.
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "attention/model/next_tokens.hpp"
#include "attention/train/probe.hpp"

TEST_CASE("top_next_tokens: the k highest logits, float64 softmax, ties by id", "[next_tokens]") {
  const std::vector<float> logits{0.5f, 3.0f, -1.0f, 3.0f, 2.25f, -7.0f};
  double sum = 0.0;
  for (const float l : logits) sum += std::exp(double(l) - 3.0);
  const auto top = attn::top_next_tokens(logits, 4);
  REQUIRE(top.size() == 4);
  const std::vector<std::int32_t> expected_ids{1, 3, 4, 0};  // 3.0 twice: id 1 before id 3
  for (std::size_t i = 0; i < top.size(); ++i) {
    CHECK(top[i].id == expected_ids[i]);
    const double expected = std::exp(double(logits[std::size_t(top[i].id)]) - 3.0) / sum;
    CHECK(std::abs(top[i].probability - expected) < 1e-15);
  }
  // All of them: probabilities sum to 1; k past the vocabulary is capped.
  const auto all = attn::top_next_tokens(logits, 100);
  REQUIRE(all.size() == logits.size());
  double total = 0.0;
  for (const auto& t : all) total += t.probability;
  CHECK(std::abs(total - 1.0) < 1e-12);
  CHECK(all.back().id == 5);
  CHECK(attn::top_next_tokens(logits, 0).empty());
  CHECK(attn::top_next_tokens({}, 3).empty());
}

TEST_CASE("top_next_tokens: huge logits do not overflow", "[next_tokens]") {
  const std::vector<float> logits{1000.0f, 1000.0f, -5.0f};
  const auto top = attn::top_next_tokens(logits, 3);
  CHECK(top[0].id == 0);
  CHECK(top[1].id == 1);
  CHECK(std::abs(top[0].probability - 0.5) < 1e-12);
  CHECK(top[2].probability < 1e-300);
}

TEST_CASE(
    "a checkpoint's default probe: one sequence of min(context/2, 25) tokens and their repeat",
    "[next_tokens]") {
  attn::SmallModelOptions options;
  options.vocab = 50257;
  options.context = 1024;
  attn::ModelConfig config = attn::small_model_config(options);
  config.checkpoint = true;
  const attn::Batch probe = attn::model_probe(config);
  CHECK(probe.batch == 1);
  REQUIRE(probe.n == 50);
  for (std::size_t i = 0; i < 25; ++i) CHECK(probe.ids[25 + i] == probe.ids[i]);
  for (const std::int32_t id : probe.ids) CHECK((id >= 0 && id < 50257));
  config.context = 16;
  CHECK(attn::model_probe(config).n == 16);
  config.checkpoint = false;  // a trained model's: 16 sequences
  CHECK(attn::model_probe(config).batch == attn::kProbeBatch);
}
