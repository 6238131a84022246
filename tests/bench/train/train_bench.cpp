// Native benchmark of one training step of the standard config (build/native-release/
// train_bench; not a test).
//   train_bench: 2 layers × 4 heads, d_model 64, context 64, batch 32, vocab 32, learned
//     positions, LayerNorm, no MLP — loss_and_gradients + clipping + AdamW — and the backward
//     pass's matmuls (linear_backward at the step's shapes) as % of a peak probe. Warm-up, then
//     the median of >= 7 timed runs, as tests/bench/native_bench.cpp.
//   train_bench PARAMS BATCHES --serve: train-bench.mjs's native peer, torch_peer.py's line
//     protocol on stdin/stdout ("reset", "steps K" -> {"seconds", "losses"}, "quit") over the
//     parameters and batches train-peers/setup.mjs wrote.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "../peak-probe.hpp"
#include "attention/io/safetensors.hpp"
#include "attention/model/model.hpp"
#include "attention/ops/linear.hpp"
#include "attention/ops/simd.hpp"
#include "attention/rng.hpp"
#include "attention/train/optimizer.hpp"

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

std::vector<std::uint8_t> read_bytes(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(std::string("cannot open ") + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The number after "key": in a flat JSON text (setup.mjs's config and optimizer metadata).
double json_number(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\":");
  if (at == std::string::npos) throw std::runtime_error("metadata has no " + key);
  return std::strtod(json.c_str() + at + key.size() + 3, nullptr);
}

// An I32 tensor of a .safetensors file (the core's reader takes F32, F64 and U8 only): its
// data_offsets read from the header, which setup.mjs writes itself.
std::vector<std::int32_t> read_i32(const std::vector<std::uint8_t>& bytes,
                                   const std::string& name) {
  std::uint64_t length = 0;
  std::memcpy(&length, bytes.data(), 8);
  const std::string header(bytes.begin() + 8, bytes.begin() + 8 + std::ptrdiff_t(length));
  const auto at = header.find("\"" + name + "\":");
  const auto offsets = header.find("\"data_offsets\":[", at);
  if (at == std::string::npos || offsets == std::string::npos) {
    throw std::runtime_error("no tensor " + name);
  }
  char* end = nullptr;
  const std::size_t begin = std::strtoull(header.c_str() + offsets + 16, &end, 10);
  const std::size_t stop = std::strtoull(end + 1, nullptr, 10);
  std::vector<std::int32_t> values((stop - begin) / 4);
  std::memcpy(values.data(), bytes.data() + 8 + length + begin, stop - begin);
  return values;
}

// train-bench.mjs's native peer (see the file header).
int serve(const char* params_file, const char* batches_file) {
  const auto param_bytes = read_bytes(params_file);
  const auto batch_bytes = read_bytes(batches_file);
  const auto meta = attn::safetensors::File::parse(param_bytes).metadata();
  const std::string& c = meta.at("config");
  const std::string& o = meta.at("optimizer");
  attn::ModelConfig config;
  config.vocab = std::size_t(json_number(c, "vocab"));
  config.context = std::size_t(json_number(c, "context"));
  config.d_model = std::size_t(json_number(c, "dModel"));
  config.heads = std::size_t(json_number(c, "heads"));
  config.layers = std::size_t(json_number(c, "layers"));
  const std::size_t batch = std::size_t(json_number(c, "batch")), n = config.context;
  attn::AdamWConfig adam_config;
  adam_config.lr = json_number(o, "lr");
  adam_config.beta1 = json_number(o, "beta1");
  adam_config.beta2 = json_number(o, "beta2");
  adam_config.eps = json_number(o, "eps");
  adam_config.weight_decay = json_number(o, "weightDecay");
  adam_config.clip = json_number(o, "clip");
  const auto ids = read_i32(batch_bytes, "ids"), targets = read_i32(batch_bytes, "targets");
  const std::size_t pool = ids.size() / (batch * n);

  std::optional<attn::Model> model;
  std::optional<attn::AdamW> adam;
  std::size_t step_index = 0;
  const auto reset = [&] {
    model.emplace(config);
    model->load_safetensors(param_bytes);
    adam.emplace(model->parameter_count(), adam_config);
    step_index = 0;
  };
  reset();
  std::printf("{\"ready\": true, \"detail\": \"native %s, 1 thread\"}\n", attn::simd::arch_name());
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.rfind("quit", 0) == 0) break;
    if (line.rfind("reset", 0) == 0) {
      reset();
      std::printf("{\"reset\": true}\n");
    } else if (line.rfind("steps ", 0) == 0) {
      const long count = std::strtol(line.c_str() + 6, nullptr, 10);
      std::vector<float> losses;
      const auto start = Clock::now();
      for (long s = 0; s < count; ++s) {
        const std::size_t k = step_index++ % pool;
        const std::span<const std::int32_t> batch_ids(ids.data() + k * batch * n, batch * n);
        const std::span<const std::int32_t> batch_targets(targets.data() + k * batch * n,
                                                          batch * n);
        losses.push_back(model->loss_and_gradients(batch_ids, batch_targets, batch, n));
        attn::clip_grad_norm(model->gradients(), adam_config.clip);
        adam->step(model->parameters(), model->gradients());
      }
      std::printf("{\"seconds\": %.9g, \"losses\": [", ms_since(start) / 1000.0);
      for (std::size_t i = 0; i < losses.size(); ++i) {
        std::printf("%s%.9g", i ? ", " : "", double(losses[i]));
      }
      std::printf("]}\n");
    } else if (!line.empty()) {
      std::printf("{\"error\": \"unknown command\"}\n");
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[3]) == "--serve") {
    try {
      return serve(argv[1], argv[2]);
    } catch (const std::exception& e) {
      std::printf("{\"error\": \"%s\"}\n", e.what());
      return 1;
    }
  }
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
