// Generation with the KV cache and the sampler (generate.hpp, Model::prefill / decode): greedy
// generation equals repeated full forwards for a trained model, RoPE and sinusoidal models, the
// GPT-2 golden checkpoint, every Llama-family golden checkpoint (Mistral's sliding window
// included) and the families of tests/data/families (GPT-NeoX, Qwen3, Gemma 2 and 3, OLMo 2,
// Phi-3); cached logits equal the full forward's; the sampler's frequencies pass a chi-square test
// against the softmax (plain, top-k, top-p; one generator, or one per position as generation seeds
// them); seeds replay, and a sampled run cut into calls (8 then 12 tokens) equals the run in one
// call; every refused option is named. Head ablation's own tests are in test_ablation.cpp.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/model/generate.hpp"
#include "attention/model/model.hpp"
#include "attention/model/next_tokens.hpp"
#include "attention/rng.hpp"
#include "checkpoint_cases.hpp"
#include "generate_support.hpp"
#include "test_support.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

// The golden checkpoints of tests/data/gpt2, llama and families.
const CheckpointCases gpt2_cases{"gpt2"}, llama{"llama"}, families{"families"};

std::vector<std::int32_t> golden_ids(const std::string& folder, const std::string& name) {
  const auto expected = load_test_data(folder + "/" + name + ".expected.safetensors");
  std::vector<std::int32_t> ids;
  for (const double id : expected.f64("ids")) ids.push_back(std::int32_t(id));
  return ids;
}

// The shipped trained model `name` (web/models, docs/API.md's trained models).
std::unique_ptr<attn::Model> shipped_model(const std::string& name, bool mlp, std::size_t vocab) {
  const attn::SmallModelOptions config{
      .vocab = vocab, .context = 64, .d_model = 64, .heads = 4, .layers = 2, .mlp = mlp};
  auto model = std::make_unique<attn::Model>(config);
  model->load_safetensors(
      read_file(std::string(ATTN_TEST_DATA_DIR) + "/../../web/models/" + name + ".safetensors"));
  return model;
}

// prefill on the first `prompt` ids of `sequence`, then decode the rest one at a time: every
// cached step's logits against the full forward's row. Returns the largest difference relative to
// the row's largest logit; CHECKs it is within float32 rounding (1e-5) and, as decode's contract
// says, that the rows are equal bit for bit.
double cached_vs_full(attn::Model& model, const std::vector<std::int32_t>& sequence,
                      std::size_t prompt) {
  const std::size_t V = model.config().vocab, n = sequence.size();
  const attn::ModelOutput full = model.forward(sequence, 1, n);
  const std::vector<float> logits(full.logits.begin(), full.logits.end());
  const std::vector<std::int32_t> head(sequence.begin(), sequence.begin() + std::ptrdiff_t(prompt));
  attn::KvCache cache;
  const attn::ModelOutput first = model.prefill(head, n, cache);
  CHECK(cache.length() == prompt);
  double worst = 0.0;
  std::size_t unequal = 0;
  const auto compare = [&](std::span<const float> cached, std::size_t t) {
    REQUIRE(cached.size() == V);
    const float* want = logits.data() + t * V;
    double scale = 1.0, diff = 0.0;
    for (std::size_t i = 0; i < V; ++i) {
      scale = std::max(scale, std::abs(double(want[i])));
      diff = std::max(diff, std::abs(double(cached[i]) - double(want[i])));
    }
    worst = std::max(worst, diff / scale);
    if (!std::equal(cached.begin(), cached.end(), want)) ++unequal;
  };
  compare(first.logits, prompt - 1);
  for (std::size_t t = prompt; t < n; ++t) compare(model.decode(sequence[t], cache).logits, t);
  CHECK(cache.length() == n);
  CHECK(worst <= 1e-5);
  CHECK(unequal == 0);
  return worst;
}

// ---- the chi-square test ------------------------------------------------------------------------

// The regularized upper incomplete gamma function Q(a, x) (Numerical Recipes' gammq: the series
// below a + 1, the continued fraction above).
double gamma_q(double a, double x) {
  if (x <= 0.0) return 1.0;
  const double log_prefix = -x + a * std::log(x) - std::lgamma(a);
  if (x < a + 1.0) {
    double term = 1.0 / a, sum = term;
    for (double n = 1; n < 1000 && std::abs(term) > std::abs(sum) * 1e-16; ++n) {
      term *= x / (a + n);
      sum += term;
    }
    return 1.0 - sum * std::exp(log_prefix);
  }
  const double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 1000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1.0) < 1e-16) break;
  }
  return std::exp(log_prefix) * h;
}

// The probability of a chi-square with `df` degrees of freedom reaching `statistic`.
double chi_square_p(double statistic, std::size_t df) {
  return gamma_q(double(df) / 2.0, statistic / 2.0);
}

// The distribution the sampler must follow, written out independently: softmax of logits / T,
// the top_k highest (ties by the lower id) renormalized, then the fewest most likely whose mass
// reaches top_p (an id is kept while the mass before it is below top_p), renormalized.
std::vector<double> expected_distribution(const std::vector<float>& logits, double temperature,
                                          std::size_t top_k, double top_p) {
  const std::size_t V = logits.size();
  std::vector<std::size_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return logits[a] > logits[b]; });
  const std::size_t k = top_k == 0 ? V : std::min(top_k, V);
  std::vector<double> p(V, 0.0);
  double sum = 0.0;
  for (std::size_t i = 0; i < k; ++i) {
    sum += p[order[i]] =
        std::exp((double(logits[order[i]]) - double(logits[order[0]])) / temperature);
  }
  double mass = 0.0, kept = 0.0;
  for (std::size_t i = 0; i < k; ++i) {
    const double q = p[order[i]] / sum;
    if (i > 0 && mass >= top_p) {
      p[order[i]] = 0.0;
      continue;
    }
    mass += q;
    kept += p[order[i]];
  }
  for (double& value : p) value /= kept;
  return p;
}

struct ChiSquare {
  double statistic = 0.0;
  std::size_t df = 0;
  double p = 1.0;
  std::size_t outside = 0;  // draws of ids whose expected probability is 0
};

ChiSquare chi_square(const std::vector<std::size_t>& counts, const std::vector<double>& expected,
                     std::size_t draws) {
  ChiSquare result;
  std::size_t categories = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (expected[i] == 0.0) {
      result.outside += counts[i];
      continue;
    }
    const double e = expected[i] * double(draws);
    result.statistic += (double(counts[i]) - e) * (double(counts[i]) - e) / e;
    ++categories;
  }
  result.df = categories - 1;
  result.p = chi_square_p(result.statistic, result.df);
  return result;
}

// `draws` samples from one generator seeded `seed`, or (per_position) draw i from a generator
// seeded position_seed(seed, i), as generation draws the token at each sequence position.
std::vector<std::size_t> sample_counts(const std::vector<float>& logits, double temperature,
                                       std::size_t top_k, double top_p, std::uint32_t seed,
                                       std::size_t draws, bool per_position = false) {
  attn::Sampler sampler(temperature, top_k, top_p, seed);
  std::vector<std::size_t> counts(logits.size(), 0);
  for (std::size_t i = 0; i < draws; ++i) {
    if (per_position) sampler.reseed(attn::position_seed(seed, i));
    ++counts[std::size_t(sampler.sample(logits))];
  }
  return counts;
}

}  // namespace

// ---- generation equals repeated full forwards -------------------------------------------------

TEST_CASE("greedy generation equals repeated full forwards: trained, RoPE and sinusoidal models",
          "[generate]") {
  SECTION("the shipped english model (learned positions, MLP)") {
    const auto model = shipped_model("english", true, 48);
    require_greedy_equals_full_forwards(*model, some_ids(9, 48, 1), 30);
  }
  SECTION("the shipped induction model (learned positions, attention only)") {
    const auto model = shipped_model("induction", false, 52);
    std::vector<std::int32_t> prompt = some_ids(10, 52, 2);
    prompt.insert(prompt.end(), prompt.begin(), prompt.begin() + 4);  // a repeat to continue
    require_greedy_equals_full_forwards(*model, prompt, 40);
  }
  SECTION("RoPE (interleaved), MLP, tied") {
    attn::SmallModelOptions config = ablation_config();
    config.positional = attn::PositionalKind::Rope;
    config.tied = true;
    config.context = 48;
    attn::Model model(config);
    redraw(model, 0.25, 3);
    require_greedy_equals_full_forwards(model, some_ids(7, 40, 3), 41);
  }
  SECTION("sinusoidal positions, no norm, tanh GELU") {
    attn::SmallModelOptions config = ablation_config();
    config.positional = attn::PositionalKind::Sinusoidal;
    config.layer_norm = false;
    config.gelu = attn::GeluKind::Tanh;
    attn::Model model(config);
    redraw(model, 0.15, 4);
    require_greedy_equals_full_forwards(model, some_ids(5, 40, 4), 20);
  }
}

TEST_CASE("greedy generation equals repeated full forwards: the GPT-2 and Llama-family goldens",
          "[generate]") {
  {
    INFO("gpt2/tiny-f32");
    const auto model = gpt2_cases.load("tiny-f32");
    require_greedy_equals_full_forwards(*model, golden_ids("gpt2", "tiny-f32"), 20);  // context 32
  }
  for (const char* name : {"llama-bf16", "llama3-f32", "qwen2-f32", "mistral-f32", "smollm2-f16"}) {
    INFO(std::string("llama/") + name);
    const auto model = llama.load(name);
    if (std::string(name) == "mistral-f32") REQUIRE(model->config().blocks[0].window == 5);
    require_greedy_equals_full_forwards(*model, golden_ids("llama", name), 24);
  }
}

TEST_CASE(
    "greedy generation equals repeated full forwards: GPT-NeoX, Qwen3, Gemma 2 and 3, OLMo 2, "
    "Phi-3",
    "[generate][families]") {
  // Partial rotary and both residual forms, q/k norms, local and global layers with two RoPE
  // bases and linear scaling, soft-caps of the scores and the logits, norms after each sublayer,
  // fused projections and a window on every layer; F16 and BF16 weights kept 2-byte.
  for (const char* name :
       {"pythia-f32", "pythia-f16", "neox-sequential-f32", "qwen3-bf16", "gemma3-f32",
        "gemma3-pattern-f32", "gemma2-f32", "gemma2-bf16", "olmo2-f32", "phi3-bf16"}) {
    INFO(std::string("families/") + name);
    const auto model = families.load(name);
    require_greedy_equals_full_forwards(*model, golden_ids("families", name), 24);
    // And with a head knocked out (the cache keeps the ablation it was filled with).
    model->ablate({{model->config().layers - 1, 1}});
    require_greedy_equals_full_forwards(*model, golden_ids("families", name), 8);
  }
}

TEST_CASE("cached logits equal the full forward's, bit for bit (within 1e-5 of the largest logit)",
          "[generate]") {
  double worst = 0.0;
  {
    const auto model = shipped_model("english", true, 48);
    worst = std::max(worst, cached_vs_full(*model, some_ids(60, 48, 7), 5));
  }
  {
    attn::SmallModelOptions config = ablation_config();
    config.positional = attn::PositionalKind::Rope;
    attn::Model model(config);
    redraw(model, 0.25, 8);
    worst = std::max(worst, cached_vs_full(model, some_ids(32, 40, 8), 1));
  }
  {
    const auto model = gpt2_cases.load("tiny-f32");
    worst = std::max(worst, cached_vs_full(*model, some_ids(32, 64, 9), 3));
  }
  for (const char* name : {"llama-bf16", "qwen2-f32", "mistral-f32", "smollm2-f16"}) {
    INFO(name);
    const auto model = llama.load(name);
    worst = std::max(worst, cached_vs_full(*model, some_ids(40, model->config().vocab, 10), 6));
  }
  for (const char* name : {"pythia-f16", "neox-sequential-f32", "qwen3-f32", "gemma3-bf16",
                           "gemma3-pattern-f32", "gemma2-f32", "olmo2-bf16", "phi3-f32"}) {
    INFO(name);
    const auto model = families.load(name);
    worst = std::max(worst, cached_vs_full(*model, some_ids(40, model->config().vocab, 11), 7));
  }
  std::printf("cached vs full forward: largest logit difference %.3g of the row's largest logit\n",
              worst);
}

TEST_CASE("the KV cache holds each layer's keys and values after RoPE, once per K/V head",
          "[generate]") {
  const auto model = llama.load("qwen2-f32");  // 4 query heads share 1 K/V head
  const std::vector<std::int32_t> ids = golden_ids("llama", "qwen2-f32");
  const std::size_t n = ids.size();
  const attn::AttentionShape shape = attn::attention_shape(model->config());
  CHECK(shape.kv_width() == 16);
  // The whole prompt at once, and half of it then one token at a time: the same keys and values.
  attn::KvCache whole, stepped;
  model->prefill(ids, n, whole);
  REQUIRE(whole.keys(0).size() == n * shape.kv_width());
  const std::vector<std::int32_t> half(ids.begin(), ids.begin() + 6);
  model->prefill(half, n + 1, stepped);
  CHECK(stepped.capacity() == n + 1);
  for (std::size_t t = 6; t < n; ++t) model->decode(ids[t], stepped);
  CHECK(stepped.length() == n);
  for (std::size_t l = 0; l < model->config().layers; ++l) {
    CHECK(std::equal(whole.keys(l).begin(), whole.keys(l).end(), stepped.keys(l).begin()));
    CHECK(std::equal(whole.values(l).begin(), whole.values(l).end(), stepped.values(l).begin()));
  }
  model->decode(ids[0], stepped);
  CHECK_THROWS_WITH(model->decode(ids[1], stepped),
                    ContainsSubstring("the KV cache is full: it has room for 13 positions"));
  attn::KvCache other;
  CHECK_THROWS_WITH(model->decode(1, other), ContainsSubstring("run prefill on the prompt first"));
  model->prefill(half, n, other);
  CHECK_THROWS_WITH(model->decode(72, other), ContainsSubstring("token id 72 is out of range"));
  CHECK_THROWS_WITH(model->prefill(ids, n - 1, other),
                    ContainsSubstring("needs room for 12 to 128 positions (the context), got 11"));
}

// ---- the sampler --------------------------------------------------------------------------------

TEST_CASE("the sampler's frequencies follow the softmax: chi-square at a false-alarm rate of 1e-6",
          "[generate][sampler]") {
  // Fixed logits with a tie (ids 1 and 2); 200 000 draws per setting from a fixed seed, so the
  // test is deterministic; a correct sampler fails it with probability 1e-6 per setting.
  const std::vector<float> logits{2.0f,  1.5f,  1.5f,  1.0f,  0.3f, 0.0f,
                                  -0.5f, -1.0f, -2.0f, -3.0f, 0.7f, 1.2f};
  const std::size_t draws = 200000;
  struct Setting {
    double temperature;
    std::size_t top_k;
    double top_p;
    std::size_t kept;
  };
  for (const Setting s :
       {Setting{1.0, 0, 1.0, 12}, Setting{0.7, 5, 1.0, 5}, Setting{1.3, 0, 0.8, 6},
        Setting{1.0, 6, 0.9, 5}, Setting{2.5, 3, 1.0, 3}, Setting{1.0, 0, 0.3, 2}}) {
    INFO("temperature " << s.temperature << " top_k " << s.top_k << " top_p " << s.top_p);
    const auto expected = expected_distribution(logits, s.temperature, s.top_k, s.top_p);
    CHECK(std::size_t(std::count_if(expected.begin(), expected.end(),
                                    [](double p) { return p > 0.0; })) == s.kept);
    // The distribution the sampler reports is the one written out here.
    attn::Sampler sampler(s.temperature, s.top_k, s.top_p, 1);
    const auto reported = sampler.distribution(logits);
    REQUIRE(reported.size() == s.kept);
    for (const auto& t : reported)
      CHECK(std::abs(t.probability - expected[std::size_t(t.id)]) < 1e-12);
    const auto counts = sample_counts(logits, s.temperature, s.top_k, s.top_p, 20240601, draws);
    const ChiSquare test = chi_square(counts, expected, draws);
    INFO("chi-square " << test.statistic << " with " << test.df << " degrees of freedom, p "
                       << test.p);
    CHECK(test.outside == 0);
    CHECK(test.df == s.kept - 1);
    CHECK(test.p > 1e-6);
  }
  // The test has power: the same draws at temperature 1 reject temperature 1.1's distribution.
  const auto counts = sample_counts(logits, 1.0, 0, 1.0, 20240601, draws);
  CHECK(chi_square(counts, expected_distribution(logits, 1.1, 0, 1.0), draws).p < 1e-6);

  // Generation draws each position's token from its own generator, seeded position_seed(seed, p):
  // the first draw of each of 200 000 such generators follows the softmax too (and has the power
  // to reject temperature 1.1).
  for (const Setting s : {Setting{1.0, 0, 1.0, 12}, Setting{1.3, 0, 0.8, 6}}) {
    INFO("per position: temperature " << s.temperature << " top_p " << s.top_p);
    const auto expected = expected_distribution(logits, s.temperature, s.top_k, s.top_p);
    const auto per_position =
        sample_counts(logits, s.temperature, s.top_k, s.top_p, 20240601, draws, true);
    const ChiSquare test = chi_square(per_position, expected, draws);
    INFO("chi-square " << test.statistic << " with " << test.df << " degrees of freedom, p "
                       << test.p);
    CHECK(test.outside == 0);
    CHECK(test.p > 1e-6);
  }
  const auto per_position = sample_counts(logits, 1.0, 0, 1.0, 20240601, draws, true);
  CHECK(chi_square(per_position, expected_distribution(logits, 1.1, 0, 1.0), draws).p < 1e-6);
}

TEST_CASE("position_seed: distinct, well-mixed seeds for neighbouring positions and seeds",
          "[generate][sampler]") {
  // SplitMix64's finalizer (Vigna's splitmix64.c) of 0 + its increment: a published value.
  CHECK(attn::position_seed(0, 0) == std::uint32_t(0xE220A8397B1DCDAFull >> 32));
  std::vector<std::uint32_t> seeds;
  for (std::uint32_t seed = 0; seed < 64; ++seed) {
    for (std::uint64_t p = 0; p < 512; ++p) seeds.push_back(attn::position_seed(seed, p));
  }
  std::sort(seeds.begin(), seeds.end());
  CHECK(std::adjacent_find(seeds.begin(), seeds.end()) == seeds.end());  // 32 768 distinct
  // Each output bit is set in about half of them (±5 standard deviations of 32 768 fair coins).
  for (int bit = 0; bit < 32; ++bit) {
    const auto ones = std::count_if(seeds.begin(), seeds.end(),
                                    [bit](std::uint32_t v) { return (v >> bit) & 1u; });
    INFO("bit " << bit);
    CHECK(std::abs(double(ones) - 16384.0) < 5.0 * std::sqrt(32768.0 / 4.0));
  }
}

TEST_CASE(
    "a sampled run does not depend on how it is cut into calls: position p draws from (seed, p)",
    "[generate][sampler]") {
  const auto model = shipped_model("english", true, 48);
  const auto prompt = some_ids(6, 48, 21);
  attn::GenerateOptions options{
      .max_tokens = 20, .temperature = 1.2, .top_k = 20, .top_p = 0.95, .seed = 4242};
  const attn::Generation whole = attn::generate(*model, prompt, options);
  REQUIRE(whole.ids.size() == 20);
  // The sampler is really sampling here: not the greedy run.
  attn::GenerateOptions greedy;
  greedy.max_tokens = 20;
  CHECK(attn::generate(*model, prompt, greedy).ids != whole.ids);

  // 8 tokens, then 12 more after the prompt + those 8, with the same seed; and 5 + 5 + 10.
  for (const std::vector<std::size_t>& cuts :
       {std::vector<std::size_t>{8, 12}, std::vector<std::size_t>{5, 5, 10}}) {
    INFO("chunks of " << cuts.front() << " first");
    std::vector<std::int32_t> sequence = prompt;
    std::vector<attn::GeneratedToken> steps;
    for (const std::size_t count : cuts) {
      attn::GenerateOptions chunk = options;
      chunk.max_tokens = count;
      const attn::Generation part = attn::generate(*model, sequence, chunk);
      REQUIRE(part.ids.size() == count);
      sequence.insert(sequence.end(), part.ids.begin(), part.ids.end());
      steps.insert(steps.end(), part.steps.begin(), part.steps.end());
    }
    CHECK(std::vector<std::int32_t>(sequence.begin() + 6, sequence.end()) == whole.ids);
    REQUIRE(steps.size() == whole.steps.size());
    for (std::size_t k = 0; k < steps.size(); ++k) {
      INFO("token " << k);
      CHECK(steps[k].id == whole.steps[k].id);
      CHECK(steps[k].probability == whole.steps[k].probability);
      CHECK(steps[k].attention == whole.steps[k].attention);
    }
  }
  // Another seed writes another run.
  options.seed = 4243;
  CHECK(attn::generate(*model, prompt, options).ids != whole.ids);
}

TEST_CASE("greedy picks the argmax, the lowest id among equals; a seed replays a sampled run",
          "[generate][sampler]") {
  attn::Sampler greedy(0.0, 0, 1.0, 1);
  CHECK(greedy.sample(std::vector<float>{0.5f, 3.0f, -1.0f, 3.0f}) == 1);
  CHECK(greedy.distribution(std::vector<float>{0.5f, 3.0f, -1.0f, 3.0f}).front().id == 1);
  attn::Sampler top1(5.0, 1, 1.0, 1);  // top-k 1 at any temperature is greedy
  for (int i = 0; i < 50; ++i) CHECK(top1.sample(std::vector<float>{0.5f, 3.0f, -1.0f, 3.0f}) == 1);

  const auto model = shipped_model("english", true, 48);
  attn::GenerateOptions options{
      .max_tokens = 30, .temperature = 1.2, .top_k = 20, .top_p = 0.95, .seed = 77};
  const auto prompt = some_ids(6, 48, 11);
  const attn::Generation a = attn::generate(*model, prompt, options);
  const attn::Generation b = attn::generate(*model, prompt, options);
  CHECK(a.ids == b.ids);
  for (std::size_t k = 0; k < a.steps.size(); ++k) {
    CHECK(a.steps[k].probability == b.steps[k].probability);
    CHECK(a.steps[k].attention == b.steps[k].attention);
  }
  options.seed = 78;
  CHECK(attn::generate(*model, prompt, options).ids != a.ids);
  // A sampled run's tokens and rows are the full forward's too: each step's probability is the
  // full forward's softmax of the id drawn.
  std::vector<std::int32_t> sequence = prompt;
  for (std::size_t k = 0; k < a.ids.size(); ++k) {
    const auto full = model->forward(sequence, 1, sequence.size());
    const auto last = full.logits.subspan((sequence.size() - 1) * 48, 48);
    CHECK(a.steps[k].probability == attn::token_probability(last, a.ids[k]));
    sequence.push_back(a.ids[k]);
  }
}

TEST_CASE("generation stops at a stop id, which is its last token", "[generate]") {
  const auto model = shipped_model("english", true, 48);
  const auto prompt = some_ids(6, 48, 12);
  attn::GenerateOptions options;
  options.max_tokens = 25;
  const attn::Generation full = attn::generate(*model, prompt, options);
  options.stop = {full.ids[6], 47};
  const std::size_t first =
      std::size_t(std::find(full.ids.begin(), full.ids.end(), full.ids[6]) - full.ids.begin());
  const attn::Generation stopped = attn::generate(*model, prompt, options);
  CHECK(stopped.ids ==
        std::vector<std::int32_t>(full.ids.begin(), full.ids.begin() + std::ptrdiff_t(first) + 1));
  attn::Generator generator(*model, prompt, options);
  while (generator.next()) {
  }
  CHECK(generator.done());
  CHECK(generator.produced() == first + 1);
  CHECK_FALSE(generator.next().has_value());
}

TEST_CASE("generate refuses options and prompts by name", "[generate]") {
  const auto model = shipped_model("english", true, 48);  // context 64, vocab 48
  const std::vector<std::int32_t> prompt = some_ids(60, 48, 13);
  const auto fails = [&](attn::GenerateOptions options, const std::string& message,
                         std::vector<std::int32_t> ids) {
    CHECK_THROWS_WITH(attn::Generator(*model, ids, options), ContainsSubstring(message));
  };
  attn::GenerateOptions options;
  // Unset: 20 new tokens, or what the context leaves.
  CHECK(attn::generate(*model, prompt, options).ids.size() == 4);
  CHECK(attn::generate(*model, some_ids(5, 48, 1), options).ids.size() == 20);
  options.max_tokens = 0;
  fails(options, "maxTokens must be at least 1, got 0", prompt);
  options.max_tokens = 5;
  fails(options,
        "the prompt's 60 tokens and maxTokens 5 make 65 positions, past the model's context of 64 "
        "(maxTokens can be at most 4 after this prompt)",
        prompt);
  fails(options, "the prompt alone fills it", some_ids(64, 48, 1));
  options.max_tokens = 4;
  CHECK_NOTHROW(attn::generate(*model, prompt, options));
  fails(options, "generate needs a prompt of at least one token", {});
  options.temperature = -0.5;
  fails(options, "temperature must be 0 (greedy) or a finite number above 0, got -0.5", prompt);
  options.temperature = std::numeric_limits<double>::quiet_NaN();
  fails(options, "temperature must be", prompt);
  options.temperature = std::numeric_limits<double>::infinity();
  fails(options, "temperature must be", prompt);
  options.temperature = 1.0;
  options.top_p = 0.0;
  fails(options, "topP must be above 0 and at most 1 (1 keeps every token), got 0", prompt);
  options.top_p = 1.5;
  fails(options, "topP must be above 0 and at most 1", prompt);
  options.top_p = 1.0;
  options.stop = {3, 48};
  fails(options, "stop id 48 is out of range: the vocabulary has ids 0 to 47", prompt);
  options.stop = {};
  fails(options, "token id 48 at index 1", std::vector<std::int32_t>{1, 48});
}

// ---- speed (not a test: run `attention_tests "[.speed]"`) ---------------------------------------

TEST_CASE("generation speed of a GPT-2-small-sized random model", "[.speed]") {
  const attn::SmallModelOptions gpt2{.vocab = 50257,
                                     .context = 1024,
                                     .d_model = 768,
                                     .heads = 12,
                                     .layers = 12,
                                     .mlp = true,
                                     .tied = true,
                                     .gelu = attn::GeluKind::Tanh};
  attn::ModelConfig config = attn::small_model_config(gpt2);
  config.checkpoint = true;  // GPT-2's sizes; the weights drawn below
  attn::Model model(config, {});
  attn::NumpyRandomState rng(1);
  for (const auto& info : model.parameter_table()) {
    auto values = model.parameter(info.name);
    if (info.name.find("ln") != std::string::npos && info.name.ends_with(".weight")) {
      std::fill(values.begin(), values.end(), 1.0f);
    } else {
      rng.fill_randn(values, 0.02);
    }
  }
  const auto prompt = some_ids(64, config.vocab, 2);
  attn::GenerateOptions options;
  options.max_tokens = 64;
  attn::generate(model, prompt, options);  // warm-up
  for (int run = 0; run < 3; ++run) {
    const auto start = std::chrono::steady_clock::now();
    attn::Generator generator(model, prompt, options);
    generator.next();
    const auto first = std::chrono::steady_clock::now();
    std::size_t produced = 1;
    while (generator.next()) ++produced;
    const auto end = std::chrono::steady_clock::now();
    const double ttft = std::chrono::duration<double>(first - start).count();
    const double rest = std::chrono::duration<double>(end - first).count();
    std::printf(
        "GPT-2-small-sized, 64-token prompt, %zu new tokens: first token %.1f ms, then %.1f "
        "tokens/s (%.2f ms each); %.1f tokens/s overall\n",
        produced, ttft * 1e3, double(produced - 1) / rest, rest * 1e3 / double(produced - 1),
        double(produced) / (ttft + rest));
  }
}
