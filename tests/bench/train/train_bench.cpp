// Native benchmark of one training step of the standard config (build/native-release/
// attention_train_bench; not a test): 2 layers × 4 heads, d_model 64, context 64, batch 32,
// vocab 32, learned positions, LayerNorm, no MLP — loss_and_gradients + clipping + AdamW —
// and the backward pass's matmuls (linear_backward at the step's shapes) as % of a peak probe.
// Warm-up, then the median of >= 7 timed runs, as tests/bench/native_bench.cpp.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "../peak-probe.hpp"
#include "attention/model/model.hpp"
#include "attention/model/optimizer.hpp"
#include "attention/ops/linear.hpp"
#include "attention/ops/simd.hpp"
#include "attention/rng.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

template <class Fn>
double measure(Fn&& fn) {
  const auto warm_start = Clock::now();
  for (int calls = 0; calls < 2 || ms_since(warm_start) < 100.0; ++calls) fn();
  std::vector<double> times;
  const auto timed_start = Clock::now();
  while (times.size() < 7 || (ms_since(timed_start) < 300.0 && times.size() < 101)) {
    const auto t = Clock::now();
    fn();
    times.push_back(ms_since(t));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double peak_gflops() {
  const int width = probe_width();
  constexpr int kIters = 2000000;
  double peak = 0.0;
  float sink = 0.0f;
  for (int chains : {8, 12, 16, 20, 24}) {
    const auto t = Clock::now();
    sink = sink + probe_peak(chains, kIters);
    const double ms = ms_since(t);
    peak = std::max(peak, 2.0 * width * chains * double(kIters) / ms / 1e6);
  }
  if (sink == 12345.0f) std::printf(" ");
  return peak;
}

std::vector<float> randn(std::size_t count, std::uint32_t seed) {
  std::vector<float> values(count);
  attn::NumpyRandomState(seed).fill_randn(values, 0.5);
  return values;
}

}  // namespace

int main() {
  const std::size_t batch = 32, n = 64, d = 64, vocab = 32, layers = 2;
  const std::size_t M = batch * n;
  std::printf("# Attention Lens native training-step benchmark (SIMD arch: %s)\n\n",
              attn::simd::arch_name());
  const double peak = peak_gflops();
  std::printf("peak probe: %.1f GFLOP/s\n\n", peak);

  attn::ModelConfig config;
  config.vocab = vocab;
  config.context = n;
  config.d_model = d;
  config.heads = 4;
  config.layers = layers;
  attn::Model model(config);
  attn::AdamWConfig adam_config;
  attn::AdamW adam(model.parameter_count(), adam_config);
  std::vector<std::int32_t> ids(M), targets(M);
  attn::NumpyRandomState rng(1);
  for (std::size_t i = 0; i < M; ++i) {
    ids[i] = std::int32_t(rng.next_u32() % vocab);
    targets[i] = std::int32_t(rng.next_u32() % vocab);
  }
  // flops: linears 2·M·d·(3d + d) per layer + 2·M·d·vocab, attention 4·batch·n²·d per layer
  // (causal counted in full); the backward twice the forward.
  const double forward_flops =
      layers * (2.0 * M * d * 4 * d + 4.0 * batch * n * n * d) + 2.0 * M * d * vocab;
  const double ms_forward = measure([&] { model.forward(ids, batch, n); });
  const double ms_grad = measure([&] { model.loss_and_gradients(ids, targets, batch, n); });
  const double ms_step = measure([&] {
    model.loss_and_gradients(ids, targets, batch, n);
    attn::clip_grad_norm(model.gradients(), adam_config.clip);
    adam.step(model.parameters(), model.gradients());
  });
  std::printf(
      "standard config: %zu layers x %zu heads, d_model %zu, n %zu, batch %zu, vocab %zu "
      "(%zu parameters)\n\n",
      layers, config.heads, d, n, batch, vocab, model.parameter_count());
  std::printf("| what | ms | GFLOP/s | %% peak |\n|---|---|---|---|\n");
  std::printf("| forward | %.2f | %.1f | %.0f %% |\n", ms_forward, forward_flops / ms_forward / 1e6,
              100 * forward_flops / ms_forward / 1e6 / peak);
  std::printf("| loss and gradients | %.2f | %.1f | %.0f %% |\n", ms_grad,
              3 * forward_flops / ms_grad / 1e6, 100 * 3 * forward_flops / ms_grad / 1e6 / peak);
  std::printf("| training step (+ clip + AdamW) | %.2f | %.1f | %.0f %% |\n", ms_step,
              3 * forward_flops / ms_step / 1e6, 100 * 3 * forward_flops / ms_step / 1e6 / peak);
  std::printf("\ntraining steps per second: %.1f\n\n", 1000.0 / ms_step);

  // The backward's matmuls alone: linear_backward (dX = dY·W, dW += dYᵀ·X, db) at the shapes
  // of one step: in_proj [3d, d], out_proj [d, d], unembed [vocab, d], over M = batch·n rows.
  std::printf("| backward matmul (M = %zu) | ms | GFLOP/s | %% peak |\n|---|---|---|---|\n", M);
  struct Shape {
    const char* name;
    std::size_t in, out;
  };
  attn::LinearScratch scratch;
  for (const Shape s : {Shape{"in_proj (64 -> 192)", d, 3 * d}, Shape{"out_proj (64 -> 64)", d, d},
                        Shape{"unembed (64 -> 32)", d, vocab}}) {
    const auto x = randn(M * s.in, 2), w = randn(s.out * s.in, 3), dy = randn(M * s.out, 4);
    std::vector<float> dx(M * s.in), dw(s.out * s.in), db(s.out);
    const double ms = measure([&] {
      attn::linear_backward(dy.data(), x.data(), w.data(), dx.data(), dw.data(), db.data(), M, s.in,
                            s.out, scratch);
    });
    const double flops = 2.0 * 2.0 * double(M) * double(s.in) * double(s.out);
    std::printf("| %s | %.3f | %.1f | %.0f %% |\n", s.name, ms, flops / ms / 1e6,
                100 * flops / ms / 1e6 / peak);
  }
  return 0;
}
