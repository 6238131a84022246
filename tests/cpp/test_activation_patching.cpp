// Activation patching (activation_patching.hpp): against PyTorch (tests/data/analysis, from
// scripts/data/make-analysis-golden.py: one site at a time with TransformerLens-named forward
// hooks, no shortcut, float32 and float64) for GPT-2, Llama (GQA, RMSNorm) and GPT-NeoX (parallel
// residual); on every family's golden checkpoint the invariants of the reruns (every position of a
// block's input patched gives the clean metric, none the corrupted one, exactly); knocked-out
// heads; the refusals.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "attention/model/activation_patching.hpp"
#include "checkpoint_cases.hpp"
#include "test_support.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

struct GoldenCase {
  std::string folder, name;
};

std::vector<std::int32_t> ids_of(const attn::safetensors::File& file, const std::string& key) {
  std::vector<std::int32_t> ids;
  for (const double id : file.f64(key)) ids.push_back(std::int32_t(id));
  return ids;
}

// The forward's last-position logit difference, from a forward of its own.
double forward_difference(attn::Model& model, const std::vector<std::int32_t>& ids, std::int32_t a,
                          std::int32_t b) {
  const auto out = model.forward(ids, 1, ids.size());
  const std::size_t V = model.config().vocab, last = (ids.size() - 1) * V;
  return double(out.logits[last + std::size_t(a)]) - double(out.logits[last + std::size_t(b)]);
}

// The logit difference's float rounding: the forward's float32 logits against the patcher's
// float64 dot products of the same normed row (a few float32 ulps of the logits).
void require_metric(double ours, double forward, const std::string& what) {
  INFO(what << ": " << ours << " vs the forward's " << forward);
  CHECK(std::abs(ours - forward) <= 1e-5 * (1.0 + std::abs(forward)));
}

// ids with positions 2 and n − 3 replaced by other ids (the test's corrupted prompt).
std::vector<std::int32_t> corrupted_of(std::vector<std::int32_t> ids, std::size_t vocab) {
  for (const std::size_t p : {std::size_t(2), ids.size() - 3}) {
    ids[p] = std::int32_t((std::size_t(ids[p]) + 5) % vocab);
  }
  return ids;
}

}  // namespace

TEST_CASE("activation patching matches PyTorch's hooks over heads, residual and layers",
          "[analysis][patching][golden]") {
  for (const auto& [folder, name] : std::vector<GoldenCase>{
           {"gpt2", "tiny-f32"}, {"llama", "llama-f32"}, {"families", "pythia-f32"}}) {
    INFO(folder + "/" + name);
    const auto model = CheckpointCases{folder}.load(name);
    const auto expected = load_test_data("analysis/" + name + ".expected.safetensors");
    const std::vector<std::int32_t> clean = ids_of(expected, "ids");
    const std::vector<std::int32_t> corrupted = ids_of(expected, "corrupted");
    const auto answers = expected.f64("answers");
    const std::int32_t a = std::int32_t(answers[0]), b = std::int32_t(answers[1]);
    const std::size_t L = model->config().layers, n = clean.size();

    const auto heads =
        attn::activation_patching(*model, clean, corrupted, a, b, attn::PatchSites::Heads);
    require_as_accurate_as_torch(std::vector<double>{heads.clean, heads.corrupted},
                                 expected.f64("patch32.metrics"), expected.f64("patch64.metrics"),
                                 "the clean and corrupted metrics");
    require_metric(heads.clean, forward_difference(*model, clean, a, b), "clean");
    require_metric(heads.corrupted, forward_difference(*model, corrupted, a, b), "corrupted");
    CHECK(heads.effect.size() == L * model->config().heads);
    require_as_accurate_as_torch(heads.effect, expected.f64("patch32.heads"),
                                 expected.f64("patch64.heads"), "heads' effects");

    const auto residual =
        attn::activation_patching(*model, clean, corrupted, a, b, attn::PatchSites::Residual);
    CHECK(residual.effect.size() == L * n);
    require_as_accurate_as_torch(residual.effect, expected.f64("patch32.residual"),
                                 expected.f64("patch64.residual"), "residual effects");
    // Block 0's input differs only where the tokens do: elsewhere nothing to restore.
    for (std::size_t p = 0; p < n; ++p) {
      if (clean[p] == corrupted[p]) CHECK(residual.effect[p] == 0.0f);
    }

    const auto layers =
        attn::activation_patching(*model, clean, corrupted, a, b, attn::PatchSites::Layers);
    CHECK(layers.effect.empty());
    require_as_accurate_as_torch(layers.attention, expected.f64("patch32.attention"),
                                 expected.f64("patch64.attention"), "attention outputs' effects");
    require_as_accurate_as_torch(layers.mlp, expected.f64("patch32.mlp"),
                                 expected.f64("patch64.mlp"), "MLP outputs' effects");
  }
}

TEST_CASE(
    "every family: every position of a block's input patched gives the clean metric, none the "
    "corrupted one, exactly",
    "[analysis][patching]") {
  for (const auto& [folder, name] : std::vector<GoldenCase>{{"gpt2", "tiny-f32"},
                                                            {"gpt2", "bare-bf16"},
                                                            {"llama", "llama-f32"},
                                                            {"llama", "smollm2-f16"},
                                                            {"llama", "mistral-f32"},
                                                            {"llama", "llama3-f32"},
                                                            {"families", "pythia-f32"},
                                                            {"families", "qwen3-f32"},
                                                            {"families", "gemma2-f32"},
                                                            {"families", "gemma3-f32"},
                                                            {"families", "olmo2-f32"},
                                                            {"families", "phi3-f32"},
                                                            {"families", "neox-sequential-f32"}}) {
    INFO(folder + "/" + name);
    const auto model = CheckpointCases{folder}.load(name);
    const auto golden = load_test_data(folder + "/" + name + ".expected.safetensors");
    const std::vector<std::int32_t> clean = ids_of(golden, "ids");
    const std::vector<std::int32_t> corrupted = corrupted_of(clean, model->config().vocab);
    const std::int32_t a = clean[1], b = clean[3];
    const std::size_t L = model->config().layers, n = clean.size();
    const auto result =
        attn::activation_patching(*model, clean, corrupted, a, b, attn::PatchSites::Layers);
    require_metric(result.clean, forward_difference(*model, clean, a, b), "clean");
    require_metric(result.corrupted, forward_difference(*model, corrupted, a, b), "corrupted");
    std::vector<std::size_t> every(n);
    std::iota(every.begin(), every.end(), std::size_t{0});
    for (std::size_t l = 0; l < L; ++l) {
      INFO("block " << l);
      CHECK(attn::residual_patched_metric(*model, clean, corrupted, a, b, l, every) ==
            result.clean);
      CHECK(attn::residual_patched_metric(*model, clean, corrupted, a, b, l, {}) ==
            result.corrupted);
    }
    // Patching block 0's input where the tokens differ is patching all of it.
    const std::vector<std::size_t> differing{2, n - 3};
    CHECK(attn::residual_patched_metric(*model, clean, corrupted, a, b, 0, differing) ==
          result.clean);
    // The last block's MLP output is the whole difference it makes at the end, minus the rest.
    const auto residual =
        attn::activation_patching(*model, clean, corrupted, a, b, attn::PatchSites::Residual);
    CHECK(residual.effect.size() == L * n);
    for (std::size_t p = 0; p < n; ++p) {
      if (clean[p] == corrupted[p]) CHECK(residual.effect[p] == 0.0f);
    }
    const auto heads =
        attn::activation_patching(*model, clean, corrupted, a, b, attn::PatchSites::Heads);
    CHECK(heads.effect.size() == L * model->config().heads);
    CHECK(heads.clean == result.clean);
  }
}

TEST_CASE("patching with a knocked-out head: it is knocked out in both runs, its effect is 0",
          "[analysis][patching][ablation]") {
  const auto model = CheckpointCases{"llama"}.load("llama-f32");
  const auto expected = load_test_data("analysis/llama-f32.expected.safetensors");
  const std::vector<std::int32_t> clean = ids_of(expected, "ids");
  const std::vector<std::int32_t> corrupted = ids_of(expected, "corrupted");
  const auto answers = expected.f64("answers");
  const std::int32_t a = std::int32_t(answers[0]), b = std::int32_t(answers[1]);
  const std::size_t heads = model->config().heads;
  const auto plain =
      attn::activation_patching(*model, clean, corrupted, a, b, attn::PatchSites::Heads);
  CHECK(plain.effect[heads + 1] != 0.0f);
  model->ablate({{1, 1}});
  const auto ablated =
      attn::activation_patching(*model, clean, corrupted, a, b, attn::PatchSites::Heads);
  CHECK(ablated.effect[heads + 1] == 0.0f);
  require_metric(ablated.clean, forward_difference(*model, clean, a, b), "clean, knocked out");
  CHECK(std::abs(ablated.clean - plain.clean) > 1e-6);
  model->ablate({});
  const auto restored =
      attn::activation_patching(*model, clean, corrupted, a, b, attn::PatchSites::Heads);
  CHECK(restored.effect == plain.effect);
}

TEST_CASE("patching refuses bad input by name and keeps working", "[analysis][patching]") {
  const auto model = CheckpointCases{"gpt2"}.load("tiny-f32");  // vocab 64, context 32
  const std::vector<std::int32_t> clean{1, 2, 3, 4, 5}, corrupted{1, 9, 3, 4, 5};
  const std::vector<std::int32_t> shorter{1, 2, 3}, outside{1, 64, 3, 4, 5};
  const auto sites = attn::PatchSites::Heads;
  CHECK_THROWS_WITH(
      attn::activation_patching(*model, clean, shorter, 7, 8, sites),
      ContainsSubstring("same length") && ContainsSubstring("clean has 5 tokens, corrupted has 3"));
  CHECK_THROWS_WITH(attn::activation_patching(*model, {}, {}, 7, 8, sites),
                    ContainsSubstring("at least one token id"));
  CHECK_THROWS_WITH(attn::activation_patching(*model, clean, outside, 7, 8, sites),
                    ContainsSubstring("token id 64 at index 1 is out of range"));
  CHECK_THROWS_WITH(attn::activation_patching(*model, clean, corrupted, 64, 8, sites),
                    ContainsSubstring("answer 64 is not in the vocabulary: it has ids 0 to 63"));
  CHECK_THROWS_WITH(
      attn::activation_patching(*model, clean, clean, 7, 8, sites),
      ContainsSubstring("same logit difference") && ContainsSubstring("nothing to restore"));
  CHECK_THROWS_WITH(
      attn::activation_patching(*model, clean, corrupted, 7, 8, attn::PatchSites::Residual, 1000.0),
      ContainsSubstring("patching over residual at 5 tokens would rerun") &&
          ContainsSubstring("use a shorter prompt, or patch over heads or layers"));
  CHECK_THROWS_WITH(attn::patch_sites_by_name("neurons"),
                    ContainsSubstring("unknown patching sites 'neurons'") &&
                        ContainsSubstring("'heads', 'residual' or 'layers'"));
  CHECK(attn::patch_sites_by_name("residual") == attn::PatchSites::Residual);
  CHECK_THROWS_WITH(attn::residual_patched_metric(*model, clean, corrupted, 7, 8, 2, {}),
                    ContainsSubstring("layer 2 is out of range"));
  const std::vector<std::size_t> far{5};
  CHECK_THROWS_WITH(attn::residual_patched_metric(*model, clean, corrupted, 7, 8, 0, far),
                    ContainsSubstring("position 5 is out of range: the prompts have 5 tokens"));
  // Still works.
  const auto result = attn::activation_patching(*model, clean, corrupted, 7, 8, sites);
  CHECK(result.effect.size() == 2 * 2);
  CHECK(result.clean != result.corrupted);
}
