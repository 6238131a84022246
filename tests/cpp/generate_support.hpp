// Helpers shared by test_generate.cpp and test_ablation.cpp: small models with redrawn weights,
// random prompts, and greedy generation checked against repeated full forwards.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "attention/model/generate.hpp"
#include "attention/model/model.hpp"
#include "attention/model/next_tokens.hpp"
#include "attention/rng.hpp"

// The small model of the ablation tests (learned positions, layer norm, GELU MLP), also the base
// of generation's RoPE and sinusoidal models.
inline attn::SmallModelOptions ablation_config() {
  return {
      .vocab = 40, .context = 32, .d_model = 32, .heads = 4, .layers = 2, .mlp = true, .seed = 5};
}

// Every parameter but the norms' redrawn N(0, std²): heads that attend unevenly.
inline void redraw(attn::Model& model, double std, std::uint32_t seed) {
  attn::NumpyRandomState rng(seed);
  for (const auto& info : model.parameter_table()) {
    if (info.name.find("ln") != std::string::npos) continue;
    rng.fill_randn(model.parameter(info.name), std);
  }
}

inline std::vector<std::int32_t> some_ids(std::size_t n, std::size_t vocab, std::uint32_t seed) {
  attn::NumpyRandomState rng(seed);
  std::vector<std::int32_t> ids(n);
  for (auto& id : ids) id = std::int32_t(rng.next_u32() % vocab);
  return ids;
}

// Greedy generation against a full forward of the sequence so far at every step: the same id
// (top_next_tokens' first), the same probability, and each layer's attention row equal to the
// forward's last query row — all bit for bit.
inline void require_greedy_equals_full_forwards(attn::Model& model,
                                                const std::vector<std::int32_t>& prompt,
                                                std::size_t max_tokens) {
  attn::GenerateOptions options;
  options.max_tokens = max_tokens;
  const attn::Generation generation = attn::generate(model, prompt, options);
  REQUIRE(generation.ids.size() == max_tokens);
  REQUIRE(generation.steps.size() == max_tokens);
  const std::size_t V = model.config().vocab, heads = model.config().heads;
  std::vector<std::int32_t> sequence = prompt;
  std::size_t differing_rows = 0;
  for (std::size_t k = 0; k < max_tokens; ++k) {
    INFO("new token " << k);
    const std::size_t n = sequence.size();
    const attn::ModelOutput full = model.forward(sequence, 1, n);
    const auto top = attn::top_next_tokens(full.logits.subspan((n - 1) * V, V), 1);
    const attn::GeneratedToken& step = generation.steps[k];
    CHECK(generation.ids[k] == top[0].id);
    CHECK(step.id == top[0].id);
    CHECK(step.probability == top[0].probability);
    REQUIRE(step.attention.size() == model.config().layers);
    for (std::size_t l = 0; l < step.attention.size(); ++l) {
      REQUIRE(step.attention[l].size() == heads * n);  // t = prompt length + k
      for (std::size_t h = 0; h < heads; ++h) {
        const float* row = full.attention[l].data() + (h * n + n - 1) * n;
        if (!std::equal(row, row + n, step.attention[l].data() + h * n)) ++differing_rows;
      }
    }
    sequence.push_back(generation.ids[k]);
  }
  CHECK(differing_rows == 0);
}
