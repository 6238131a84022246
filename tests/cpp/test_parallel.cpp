// The thread pool: every item once, errors, and the same numbers for any thread count (matmul,
// causal attention's heads, a model's forward, generation and gradients).
#include <catch2/catch_test_macros.hpp>

#include <atomic>
#include <vector>

#include "approx.hpp"
#include "attention/error.hpp"
#include "attention/model/generate.hpp"
#include "attention/model/model.hpp"
#include "attention/ops/causal_attention.hpp"
#include "attention/ops/matmul.hpp"
#include "attention/parallel.hpp"
#include "attention/rng.hpp"

namespace {

// Restores one thread when a test ends, whatever happens in it.
struct ThreadCount {
  explicit ThreadCount(std::size_t count) { attn::set_thread_count(count); }
  ~ThreadCount() { attn::set_thread_count(1); }
};

std::vector<std::int32_t> token_ids(std::size_t count, std::uint32_t seed, std::size_t vocab) {
  std::vector<std::int32_t> ids(count);
  attn::NumpyRandomState rng(seed);
  for (auto& id : ids) id = std::int32_t(rng.next_u32() % vocab);
  return ids;
}

// Everything a model computes from ids: logits, attention, a greedy and a sampled generation, the
// loss and every gradient (GPT-2's kind).
struct ModelResults {
  std::vector<float> logits, attention, gradients;
  float loss = 0;
  std::vector<std::int32_t> greedy, sampled;
  std::vector<double> probabilities;
};

ModelResults run_model(const attn::ModelConfig& config) {
  attn::Model model(config);
  const std::size_t n = 24;
  const auto ids = token_ids(2 * n, 3, config.vocab);
  ModelResults r;
  const auto out = model.forward(ids, 2, n);
  r.logits.assign(out.logits.begin(), out.logits.end());
  for (const auto& layer : out.attention)
    r.attention.insert(r.attention.end(), layer.begin(), layer.end());
  if (config.norm == attn::NormKind::LayerNorm) {  // the Llama family's ops have no backward
    r.loss = model.loss_and_gradients(ids, token_ids(2 * n, 4, config.vocab), 2, n);
    r.gradients.assign(model.gradients().begin(), model.gradients().end());
  }
  const std::vector<std::int32_t> prompt(ids.begin(), ids.begin() + 8);
  attn::GenerateOptions greedy;
  greedy.max_tokens = 12;
  const auto g = attn::generate(model, prompt, greedy);
  r.greedy = g.ids;
  for (const auto& step : g.steps) r.probabilities.push_back(step.probability);
  attn::GenerateOptions sampled = greedy;
  sampled.temperature = 0.9;
  sampled.top_k = 50;
  sampled.seed = 11;
  r.sampled = attn::generate(model, prompt, sampled).ids;
  return r;
}

}  // namespace

TEST_CASE("parallel_for hands every item to exactly one part, any thread count", "[parallel]") {
  for (const std::size_t threads : {1u, 2u, 3u, 4u}) {
    ThreadCount scope(threads);
    REQUIRE(attn::thread_count() == threads);
    for (const std::size_t items : {0u, 1u, 5u, 64u, 1000u}) {
      for (const std::size_t min_items : {1u, 7u, 500u}) {
        INFO(threads << " threads, " << items << " items, at least " << min_items << " a part");
        std::vector<std::atomic<int>> seen(items);
        std::atomic<int> parts{0};
        attn::parallel_for(items, min_items, [&](std::size_t begin, std::size_t end) {
          ++parts;
          for (std::size_t i = begin; i < end; ++i) ++seen[i];
        });
        for (std::size_t i = 0; i < items; ++i) REQUIRE(seen[i] == 1);
        CHECK(std::size_t(parts) <= threads);
        if (items > 0 && items / min_items >= threads) CHECK(std::size_t(parts) == threads);
        // a body that runs parallel_for again runs it inline
        std::atomic<int> inner{0};
        attn::parallel_for(4, 1, [&](std::size_t, std::size_t) {
          attn::parallel_for(8, 1, [&](std::size_t b, std::size_t e) { inner += int(e - b); });
        });
        CHECK(inner == 8 * int(std::min<std::size_t>(threads, 4)));
      }
    }
  }
}

TEST_CASE("set_thread_count: 1 … max_threads(), else an error naming the limit", "[parallel]") {
  REQUIRE(attn::max_threads() == attn::kMaxThreads);
  REQUIRE_THROWS_AS(attn::set_thread_count(0), attn::Error);
  REQUIRE_THROWS_AS(attn::set_thread_count(attn::kMaxThreads + 1), attn::Error);
  CHECK(attn::thread_count() == 1);
  {
    ThreadCount scope(attn::kMaxThreads);
    CHECK(attn::thread_count() == attn::kMaxThreads);
    attn::set_thread_count(2);  // fewer: the others stop
    CHECK(attn::thread_count() == 2);
  }
  CHECK(attn::thread_count() == 1);
}

TEST_CASE("matmul_packed with threads: bit-identical to one thread, one row and many",
          "[parallel]") {
  const std::size_t k = 600, n = 41 * attn::kPanelWidth + 7;  // k blocks, odd and partial panels
  const auto b = random_floats(k * n, 51);
  attn::PackedMatrix packed;
  attn::pack_matrix(attn::ConstMatView(b.data(), k, n), packed);
  for (const std::size_t m : {1u, 3u, 70u}) {
    const auto a = random_floats(m * k, 52 + m);
    const auto bias = random_floats(n, 60);
    std::vector<float> one(m * n), many(m * n);
    attn::matmul_packed(attn::ConstMatView(a.data(), m, k), packed, attn::MatView(one.data(), m, n),
                        bias.data());
    for (const std::size_t threads : {2u, 3u}) {
      ThreadCount scope(threads);
      INFO(m << " rows, " << threads << " threads");
      std::fill(many.begin(), many.end(), -7.0f);
      attn::matmul_packed(attn::ConstMatView(a.data(), m, k), packed,
                          attn::MatView(many.data(), m, n), bias.data());
      CHECK(many == one);
    }
  }
}

TEST_CASE("a model with threads: forward, generation, loss and gradients bit-identical",
          "[parallel]") {
  // wide enough that its products split, a generation step's too
  const attn::SmallModelOptions small{
      .vocab = 512, .context = 64, .d_model = 512, .heads = 8, .layers = 2, .mlp = true, .seed = 5};
  const attn::ModelConfig gpt = attn::small_model_config(small);
  attn::ModelConfig llama = gpt;  // RMSNorm, RoPE, SwiGLU, grouped-query attention
  llama.norm = attn::NormKind::RmsNorm;
  llama.positional = attn::PositionalKind::Rope;
  for (attn::BlockConfig& block : llama.blocks) {
    block.mlp = attn::MlpKind::Gated;
    block.activation = attn::Activation::Silu;
  }
  llama.mlp_width = 1376;
  llama.kv_heads = 4;
  llama.bias = {false, false, false};
  for (const auto& config : {gpt, llama}) {
    const ModelResults one = run_model(config);
    ThreadCount scope(3);
    const ModelResults three = run_model(config);
    CHECK(three.logits == one.logits);
    CHECK(three.attention == one.attention);
    CHECK(three.loss == one.loss);
    CHECK(three.gradients == one.gradients);
    CHECK(three.greedy == one.greedy);
    CHECK(three.probabilities == one.probabilities);
    CHECK(three.sampled == one.sampled);
  }
}

TEST_CASE("causal attention with threads: heads split over the pool, bit-identical to one thread",
          "[parallel]") {
  // 12 query heads over 3 key/value heads (groups of 4), 64 rows: a head is 2·64·64·64
  // multiply-adds, so the heads split into parts of at least 5 (kParallelMultiplyAdds) and the
  // second part starts inside a group (head 6 of 4 … 7): that part packs its group itself.
  const attn::AttentionShape shape{12, 3, 64};
  const std::size_t batch = 2, n = 64;
  const std::size_t head_work = 2 * n * n * shape.head_dim + 1;
  REQUIRE(attn::kParallelMultiplyAdds / head_work + 1 <= shape.heads / 2);
  const auto qkv = random_floats(batch * n * shape.row(), 21);
  const auto run = [&](std::vector<float>& att, std::vector<float>& ctx) {
    att.assign(batch * shape.heads * n * n, -7.0f);
    ctx.assign(batch * n * shape.q_width(), -7.0f);
    attn::AttentionScratch scratch;
    attn::causal_attention_forward(qkv.data(), att.data(), ctx.data(), batch, n, shape, scratch);
  };
  std::vector<float> att1, ctx1;
  run(att1, ctx1);
  std::vector<float> att_ref(att1.size()), ctx_ref(ctx1.size());
  attn::reference::causal_attention_forward(qkv.data(), att_ref.data(), ctx_ref.data(), batch, n,
                                            shape);
  require_close(att1, att_ref, 1e-6, 1e-5, "weights");
  require_close(ctx1, ctx_ref, 1e-5, 1e-5, "context");
  for (const std::size_t threads : {2u, 3u}) {
    INFO(threads << " threads");
    ThreadCount scope(threads);
    std::vector<float> att, ctx;
    run(att, ctx);
    CHECK(att == att1);
    CHECK(ctx == ctx1);
  }
}
