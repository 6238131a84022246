// The analyses of a loaded model (logit_lens.hpp, attention_rollout.hpp, logit_attribution.hpp):
// against PyTorch (tests/data/analysis, from scripts/data/make-analysis-golden.py: a reference with
// TransformerLens's hooks, float32 and float64) for GPT-2, Llama (GQA, RMSNorm) and GPT-NeoX
// (parallel residual); their invariants on every family's golden checkpoint (the lens' last row
// is the forward's softmax, rollout rows sum to 1 and start from layer 0's attention, the parts
// sum to the forward's logit difference); knocked-out heads; the refusals and bad input.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "approx.hpp"
#include "attention/model/attention_rollout.hpp"
#include "attention/model/logit_attribution.hpp"
#include "attention/model/logit_lens.hpp"
#include "attention/model/next_tokens.hpp"
#include "checkpoint_cases.hpp"
#include "test_support.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

struct GoldenCase {
  std::string folder, name;
};

// The cases of tests/data/analysis, with the folder their checkpoint is in.
const std::vector<GoldenCase> kGoldenCases{
    {"gpt2", "tiny-f32"}, {"llama", "llama-f32"}, {"families", "pythia-f32"}};

// Every golden checkpoint the invariants run on: each family, float and 2-byte weights.
const std::vector<GoldenCase> kEveryFamily{
    {"gpt2", "tiny-f32"},       {"gpt2", "bare-bf16"},
    {"llama", "llama-f32"},     {"llama", "smollm2-f16"},
    {"llama", "qwen2-f32"},     {"llama", "mistral-f32"},
    {"llama", "llama3-f32"},    {"families", "pythia-f32"},
    {"families", "qwen3-f32"},  {"families", "gemma2-f32"},
    {"families", "gemma3-f32"}, {"families", "olmo2-f32"},
    {"families", "phi3-f32"},   {"families", "neox-sequential-f32"}};

std::vector<std::int32_t> ids_of(const attn::safetensors::File& file) {
  std::vector<std::int32_t> ids;
  for (const double id : file.f64("ids")) ids.push_back(std::int32_t(id));
  return ids;
}

// The attribution's parts in one list: embed, heads…, attention biases…, MLPs…, constant, total.
std::vector<double> parts_of(const attn::LogitAttribution& r) {
  std::vector<double> parts{r.embed};
  parts.insert(parts.end(), r.heads.begin(), r.heads.end());
  parts.insert(parts.end(), r.attention_bias.begin(), r.attention_bias.end());
  parts.insert(parts.end(), r.mlp.begin(), r.mlp.end());
  parts.push_back(r.constant);
  parts.push_back(r.total);
  return parts;
}

std::vector<double> golden_parts(const attn::safetensors::File& file, const std::string& label) {
  std::vector<double> parts;
  for (const char* key : {"embed", "heads", "attention_bias", "mlp", "constant", "total"}) {
    const auto values = file.f64("attribution" + label + "." + key);
    parts.insert(parts.end(), values.begin(), values.end());
  }
  return parts;
}

// The parts (all but total) sum to total within float rounding: each part is rounded to float once
// and the forward's logits carry float32 rounding of the final norm and unembedding; 1e-5 of the
// parts' magnitudes is ~100 float32 ulps (a missing part or a wrong scale is off by far more).
void require_parts_sum_to_total(const attn::LogitAttribution& r) {
  const std::vector<double> parts = parts_of(r);
  double sum = 0.0, magnitude = 0.0;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    sum += parts[i];
    magnitude += std::abs(parts[i]);
  }
  INFO("parts sum to " << sum << ", total " << r.total << ", Σ|parts| " << magnitude);
  CHECK(std::abs(sum - r.total) <= 1e-5 * magnitude);
}

// The forward's last-position logit difference, from a forward of its own.
double forward_difference(attn::Model& model, const std::vector<std::int32_t>& ids, std::int32_t a,
                          std::int32_t b) {
  const auto out = model.forward(ids, 1, ids.size());
  const std::size_t V = model.config().vocab, last = (ids.size() - 1) * V;
  return double(out.logits[last + std::size_t(a)]) - double(out.logits[last + std::size_t(b)]);
}

// The lens' last row is the forward's softmax readout (top_next_tokens of its logits), exactly.
void require_last_row_is_forward(attn::Model& model, const std::vector<std::int32_t>& ids,
                                 const attn::LogitLens& lens) {
  const auto out = model.forward(ids, 1, ids.size());
  const std::size_t V = model.config().vocab, n = ids.size(), k = lens.top_k;
  for (std::size_t t = 0; t < n; ++t) {
    const auto top = attn::top_next_tokens(out.logits.subspan(t * V, V), k);
    for (std::size_t j = 0; j < k; ++j) {
      const std::size_t at = ((lens.rows - 1) * n + t) * k + j;
      INFO("position " << t << ", rank " << j);
      CHECK(lens.ids[at] == top[j].id);
      CHECK(lens.probs[at] == float(top[j].probability));
    }
  }
}

// Rollout's rows sum to 1 and are causal; layer 0's entry is 0.5 · mean_h A + 0.5 · I of the
// forward's layer 0, rows renormalised, computed here in double.
void require_rollout_invariants(attn::Model& model, const std::vector<std::int32_t>& ids,
                                const std::vector<float>& rollout) {
  const std::size_t n = ids.size(), L = model.config().layers;
  REQUIRE(rollout.size() == L * n * n);
  for (std::size_t l = 0; l < L; ++l) {
    for (std::size_t i = 0; i < n; ++i) {
      double sum = 0.0;
      for (std::size_t j = 0; j < n; ++j) {
        const float v = rollout[(l * n + i) * n + j];
        if (j > i) CHECK(v == 0.0f);
        CHECK(v >= 0.0f);
        sum += v;
      }
      INFO("layer " << l << " row " << i);
      CHECK(std::abs(sum - 1.0) < 1e-6);
    }
  }
  const auto out = model.forward(ids, 1, n);
  const std::size_t heads = model.config().heads;
  std::vector<double> first(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0.0;
    for (std::size_t j = 0; j <= i; ++j) {
      double mean = 0.0;
      for (std::size_t h = 0; h < heads; ++h) mean += out.attention[0][(h * n + i) * n + j];
      first[i * n + j] = 0.5 * mean / double(heads) + (i == j ? 0.5 : 0.0);
      sum += first[i * n + j];
    }
    for (std::size_t j = 0; j <= i; ++j) first[i * n + j] /= sum;
  }
  require_close(std::vector<float>(rollout.begin(), rollout.begin() + std::ptrdiff_t(n * n)), first,
                1e-7, 1e-6, "rollout's layer 0");
}

}  // namespace

TEST_CASE("logit lens, rollout and attribution match PyTorch (TransformerLens's definitions)",
          "[analysis][golden]") {
  for (const auto& [folder, name] : kGoldenCases) {
    INFO(folder + "/" + name);
    const auto model = CheckpointCases{folder}.load(name);
    const auto expected = load_test_data("analysis/" + name + ".expected.safetensors");
    const std::vector<std::int32_t> ids = ids_of(expected);
    const auto answers = expected.f64("answers");
    const std::int32_t a = std::int32_t(answers[0]), b = std::int32_t(answers[1]);
    const std::size_t top_k = std::stoul(expected.metadata().at("top_k"));
    REQUIRE(std::stoi(expected.metadata().at("token")) == a);

    attn::LogitLensOptions options;
    options.top_k = top_k;
    options.token = a;
    const attn::LogitLens lens = attn::logit_lens(*model, ids, options);
    CHECK(lens.rows == model->config().layers + 1);
    CHECK(lens.n == ids.size());
    // The reference's top-k ids and the token's ranks have no near-ties (the script checks their
    // logit gaps): they must be the same ids, in the same order.
    std::vector<std::int32_t> want_ids, want_ranks;
    for (const double id : expected.f64("lens.ids")) want_ids.push_back(std::int32_t(id));
    for (const double rank : expected.f64("lens.ranks")) want_ranks.push_back(std::int32_t(rank));
    CHECK(lens.ids == want_ids);
    CHECK(lens.token_ranks == want_ranks);
    require_as_accurate_as_torch(lens.probs, expected.f64("lens32.probs"),
                                 expected.f64("lens64.probs"), "the lens' top-k probabilities");
    require_as_accurate_as_torch(lens.token_probs, expected.f64("lens32.token"),
                                 expected.f64("lens64.token"), "the token's probabilities");
    require_last_row_is_forward(*model, ids, lens);

    const std::vector<float> rollout = attn::attention_rollout(*model, ids);
    require_as_accurate_as_torch(rollout, expected.f64("rollout32"), expected.f64("rollout64"),
                                 "rollout");
    require_rollout_invariants(*model, ids, rollout);

    const attn::LogitAttribution parts = attn::logit_attribution(*model, ids, a, b);
    CHECK(parts.heads.size() == model->config().layers * model->config().heads);
    require_as_accurate_as_torch(parts_of(parts), golden_parts(expected, "32"),
                                 golden_parts(expected, "64"), "attribution's parts");
    require_parts_sum_to_total(parts);
    CHECK(parts.total == forward_difference(*model, ids, a, b));
  }
}

TEST_CASE(
    "every family: the lens' last row is the forward's, rollout's rows sum to 1, the parts "
    "sum to the logit difference or attribution is refused saying why",
    "[analysis]") {
  for (const auto& [folder, name] : kEveryFamily) {
    INFO(folder + "/" + name);
    const auto model = CheckpointCases{folder}.load(name);
    const auto golden = load_test_data(folder + "/" + name + ".expected.safetensors");
    const std::vector<std::int32_t> ids = ids_of(golden);
    attn::LogitLensOptions options;
    options.top_k = 3;
    options.token = ids[1];
    const attn::LogitLens lens = attn::logit_lens(*model, ids, options);
    require_last_row_is_forward(*model, ids, lens);
    // The token's probability and rank agree with the top-k where it is among them.
    for (std::size_t at = 0; at < lens.rows * lens.n; ++at) {
      const std::int32_t rank = lens.token_ranks[at];
      if (rank < std::int32_t(lens.top_k)) {
        CHECK(lens.ids[at * lens.top_k + std::size_t(rank)] == ids[1]);
        CHECK(lens.probs[at * lens.top_k + std::size_t(rank)] == lens.token_probs[at]);
      }
    }
    require_rollout_invariants(*model, ids, attn::attention_rollout(*model, ids));

    const attn::ModelConfig& config = model->config();
    bool post_norm = false;
    for (std::size_t l = 0; l < config.layers; ++l) post_norm |= attn::has_post_norm(config, l);
    const std::int32_t a = ids[2], b = ids[3];
    if (post_norm || config.final_softcap > 0.0) {
      CHECK_THROWS_WITH(attn::logit_attribution(*model, ids, a, b),
                        ContainsSubstring("cannot split this model's logit difference"));
      if (post_norm) {
        CHECK_THROWS_WITH(attn::logit_attribution(*model, ids, a, b),
                          ContainsSubstring("norms after the sublayers"));
      }
      if (config.final_softcap > 0.0) {
        CHECK_THROWS_WITH(attn::logit_attribution(*model, ids, a, b),
                          ContainsSubstring("final logits are soft-capped"));
      }
    } else {
      const attn::LogitAttribution parts = attn::logit_attribution(*model, ids, a, b);
      require_parts_sum_to_total(parts);
      CHECK(parts.total == forward_difference(*model, ids, a, b));
    }
  }
}

TEST_CASE("the analyses with a knocked-out head equal a rerun with its out_proj columns zeroed",
          "[analysis][ablation]") {
  for (const auto& [folder, name] : kGoldenCases) {
    INFO(folder + "/" + name);
    const auto model = CheckpointCases{folder}.load(name);
    const auto reference = CheckpointCases{folder}.load(name);
    const auto expected = load_test_data("analysis/" + name + ".expected.safetensors");
    const std::vector<std::int32_t> ids = ids_of(expected);
    const auto answers = expected.f64("answers");
    const std::int32_t a = std::int32_t(answers[0]), b = std::int32_t(answers[1]);
    const std::size_t heads = model->config().heads, head = 1;
    const attn::AttentionShape shape = attn::attention_shape(model->config(), 0);

    const attn::LogitAttribution plain = attn::logit_attribution(*model, ids, a, b);
    model->ablate({{0, head}});
    // The reference: layer 0's out_proj weight [d, heads·head_dim] with the head's columns 0.
    const std::string out_proj = "layers.0.attn.out_proj.weight";
    const std::span<float> weight = reference->parameter(out_proj);
    for (std::size_t r = 0; r < model->config().d_model; ++r) {
      for (std::size_t c = head * shape.head_dim; c < (head + 1) * shape.head_dim; ++c) {
        weight[r * shape.q_width() + c] = 0.0f;
      }
    }
    attn::LogitLensOptions options;
    options.token = a;
    const attn::LogitLens lens = attn::logit_lens(*model, ids, options);
    const attn::LogitLens want = attn::logit_lens(*reference, ids, options);
    CHECK(lens.ids == want.ids);
    CHECK(lens.token_ranks == want.token_ranks);
    require_close(lens.probs, want.probs, 1e-7, 1e-6, "lens probabilities");
    require_close(lens.token_probs, want.token_probs, 1e-7, 1e-6, "the token's probabilities");
    require_close(attn::attention_rollout(*model, ids), attn::attention_rollout(*reference, ids),
                  1e-7, 1e-6, "rollout");
    const attn::LogitAttribution ablated = attn::logit_attribution(*model, ids, a, b);
    require_close(parts_of(ablated), parts_of(attn::logit_attribution(*reference, ids, a, b)), 1e-6,
                  1e-5, "attribution");
    CHECK(ablated.heads[0 * heads + head] == 0.0f);
    CHECK(plain.heads[0 * heads + head] != 0.0f);
    // The knock-out changed what comes after it (layer 1's patterns, the logit difference).
    CHECK(std::abs(ablated.total - plain.total) > 1e-4);
    model->ablate({});
    const attn::LogitAttribution restored = attn::logit_attribution(*model, ids, a, b);
    CHECK(parts_of(restored) == parts_of(plain));
  }
}

TEST_CASE("a created model: sinusoidal positions and no norm decompose too", "[analysis]") {
  for (const bool layer_norm : {true, false}) {
    attn::SmallModelOptions options;
    options.vocab = 40;
    options.layers = 3;
    options.mlp = true;
    options.layer_norm = layer_norm;
    options.positional =
        layer_norm ? attn::PositionalKind::Sinusoidal : attn::PositionalKind::Learned;
    options.seed = 5;
    attn::Model model(options);
    const std::vector<std::int32_t> ids{3, 17, 9, 3, 17, 21, 0, 39};
    INFO("layerNorm " << layer_norm);
    const attn::LogitAttribution parts = attn::logit_attribution(model, ids, 9, 21);
    require_parts_sum_to_total(parts);
    CHECK(parts.total == forward_difference(model, ids, 9, 21));
    if (!layer_norm) CHECK(parts.constant == 0.0);
    const attn::LogitLens lens = attn::logit_lens(model, ids);
    CHECK(lens.top_k == attn::kDefaultLensTopK);
    CHECK(!lens.token);
    CHECK(lens.token_probs.empty());
    require_last_row_is_forward(model, ids, lens);
    require_rollout_invariants(model, ids, attn::attention_rollout(model, ids));
  }
}

TEST_CASE("the analyses refuse bad input by name and keep working", "[analysis]") {
  const auto model = CheckpointCases{"gpt2"}.load("tiny-f32");  // vocab 64, context 32
  const std::vector<std::int32_t> ids{1, 2, 3, 4};
  const std::vector<std::int32_t> bad{1, 64, 3};
  const std::vector<std::int32_t> none;
  for (const auto& run : {std::function<void(std::span<const std::int32_t>)>(
                              [&](auto x) { attn::logit_lens(*model, x); }),
                          std::function<void(std::span<const std::int32_t>)>(
                              [&](auto x) { attn::attention_rollout(*model, x); }),
                          std::function<void(std::span<const std::int32_t>)>(
                              [&](auto x) { attn::logit_attribution(*model, x, 1, 2); })}) {
    CHECK_THROWS_WITH(run(bad), ContainsSubstring("token id 64 at index 1 is out of range") &&
                                    ContainsSubstring("ids 0 to 63"));
    CHECK_THROWS_WITH(run(none), ContainsSubstring("at least one token id"));
    run(ids);  // keeps working
  }
  attn::LogitLensOptions options;
  options.top_k = 0;
  CHECK_THROWS_WITH(
      attn::logit_lens(*model, ids, options),
      ContainsSubstring("topK must be between 1 and 64") && ContainsSubstring("got 0"));
  options.top_k = 65;
  CHECK_THROWS_WITH(attn::logit_lens(*model, ids, options), ContainsSubstring("got 65"));
  options.top_k = 64;
  CHECK(attn::logit_lens(*model, ids, options).ids.size() == 3 * 4 * 64);  // rows 3 (2 layers), n 4
  options.token = 64;
  CHECK_THROWS_WITH(attn::logit_lens(*model, ids, options),
                    ContainsSubstring("token 64 is not in the vocabulary: it has ids 0 to 63"));
  options.token = -1;
  CHECK_THROWS_WITH(attn::logit_lens(*model, ids, options), ContainsSubstring("token -1"));
  CHECK_THROWS_WITH(attn::logit_attribution(*model, ids, 1, 64),
                    ContainsSubstring("answer 64 is not in the vocabulary: it has ids 0 to 63"));
  CHECK_THROWS_WITH(attn::logit_attribution(*model, ids, -3, 2), ContainsSubstring("answer -3"));
  // A larger vocabulary caps topK at 100.
  attn::SmallModelOptions wide;
  wide.vocab = 200;
  attn::Model large(wide);
  options = {};
  options.top_k = 101;
  CHECK_THROWS_WITH(attn::logit_lens(large, ids, options),
                    ContainsSubstring("topK must be between 1 and 100, got 101"));
  options.top_k = 100;
  CHECK(attn::logit_lens(large, ids, options).probs.size() == 3 * 4 * 100);
  const std::vector<std::int32_t> longer(40, 1);  // past the context of 32
  CHECK_THROWS_WITH(attn::attention_rollout(*model, longer),
                    ContainsSubstring("n must be between 1 and the context 32"));
  CHECK(attn::logit_attribution(*model, ids, 1, 2).heads.size() == 2 * 2);
}
