// Native benchmark of attn::AttentionLayer::forward (build/native-release/attention_bench; run by
// npm run bench after tests/bench/bench.mjs; see README.md).
//
// Same configurations as bench.mjs: multi-head self-attention without biases, positional none,
// (n, d_model, heads) = (16,64,4) … (1024,512,8), mask none and causal, weights kept (the
// materialising path) and not (output-only). Warm-up, then the median of >= 7 timed runs
// (std::chrono::steady_clock), ms and GFLOP/s; a peak probe (independent FMA chains on xsimd
// batches of the arch the core was built for) and each result as % of it; a per-kernel
// breakdown (peak-probe.cpp: the core's matmul and SDPA called directly).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string_view>
#include <vector>

#include "attention/layer/layer.hpp"
#include "attention/layer/layer_reference.hpp"
#include "attention/ops/simd.hpp"
#include "peak-probe.hpp"
#include "quantized-kernels.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

constexpr double kWarmMs = 50.0;  // warm-up (caches, clocks; no JIT natively): >= 2 calls
constexpr int kMinRuns = 7;
constexpr double kMinTimedMs = 50.0;  // small sizes: keep timing until this much has elapsed
constexpr int kMaxRuns = 101;

// Median ms of one call of `fn` after a warm-up; runs >= 7 (more for tiny calls).
template <class Fn>
double measure(Fn&& fn, int* runs_out = nullptr) {
  const auto warm_start = Clock::now();
  for (int calls = 0; calls < 2 || ms_since(warm_start) < kWarmMs; ++calls) fn();
  std::vector<double> times;
  const auto timed_start = Clock::now();
  while (int(times.size()) < kMinRuns ||
         (ms_since(timed_start) < kMinTimedMs && int(times.size()) < kMaxRuns)) {
    const auto t = Clock::now();
    fn();
    times.push_back(ms_since(t));
  }
  if (runs_out) *runs_out = int(times.size());
  std::sort(times.begin(), times.end());
  const std::size_t m = times.size() / 2;
  return times.size() % 2 ? times[m] : 0.5 * (times[m - 1] + times[m]);
}

double gflops(double flops, double ms) {
  return flops / ms / 1e6;
}

// Same flop count as bench.mjs: 2·n·d·3d + 2·n·d·d + 2·2·n·n·d (causal counted in full).
double forward_flops(double n, double d) {
  return 2 * n * d * 3 * d + 2 * n * d * d + 2 * 2 * n * n * d;
}

// Deterministic uniform values in [-scale, scale).
std::vector<float> uniform(std::size_t count, std::uint32_t seed, float scale) {
  std::vector<float> out(count);
  std::uint32_t state = seed * 2654435761u + 12345u;
  for (auto& v : out) {
    state = state * 1664525u + 1013904223u;
    v = scale * (float(state >> 8) / float(1u << 24) * 2.0f - 1.0f);
  }
  return out;
}

float max_abs_diff(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) return INFINITY;
  float max = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const float diff = std::fabs(a[i] - b[i]);
    if (!(diff <= max)) max = std::isnan(diff) ? INFINITY : diff;
  }
  return max;
}

struct Size {
  std::size_t n, d, heads;
};

struct Row {
  Size size;
  bool causal;
  double ms, ms_out;  // weights kept / output only
  int runs, runs_out;
  double k_proj, k_attn, k_flash, k_out;  // per-kernel breakdown
  float diff;                             // output-only vs weights; and vs reference when checked
  bool checked;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "--quantized") {  // that section alone
    bench_quantized_kernels();
    return 0;
  }
  const auto started = Clock::now();
  const Size sizes[] = {{16, 64, 4}, {64, 128, 4}, {128, 256, 8}, {512, 512, 8}, {1024, 512, 8}};

  std::printf(
      "# Attention Lens native benchmark (attn::AttentionLayer::forward, SIMD arch: %s, "
      "%zu floats per register)\n\n",
      attn::simd::arch_name(), attn::simd::kWidth);
  std::printf(
      "Multi-head self-attention, no biases, positional none. Median of >= %d timed runs "
      "after %.0f ms of warm-up calls;\nGFLOP/s counts 2·n·d·3d + 2·n·d·d + 4·n²·d "
      "(causal rows count the same full flops: the core computes every score, then "
      "masks).\n\n",
      kMinRuns, kWarmMs);

  // Peak probe: best of several chain counts (enough chains hide the FMA latency).
  const int width = probe_width();
  constexpr int kIters = 2000000;
  double peak = 0.0;
  std::printf("## Peak probe: independent xsimd::fma chains (%d flops per step)\n\n", 2 * width);
  for (int chains : {8, 10, 12, 14, 16, 20, 24}) {
    double best = 0.0;
    volatile float sink = 0.0f;
    for (int r = 0; r < 5; ++r) {
      const auto t = Clock::now();
      sink = sink + probe_peak(chains, kIters);
      best = std::max(best, gflops(double(chains) * kIters * 2 * width, ms_since(t)));
    }
    std::printf("%d chains: %.1f GFLOP/s\n", chains, best);
    peak = std::max(peak, best);
  }
  std::printf("peak used below: %.1f GFLOP/s\n\n", peak);
  // What one exp costs in the softmax's kernel, by input: masked scores arrive as -inf.
  std::printf("attn::exp_values (fill + exp), ns per value:");
  for (float v : {0.0f, -50.0f, -87.33f, -87.34f, -100.0f, -INFINITY}) {
    constexpr int kCount = 1 << 16;
    const double ms = measure([&] { probe_exp(v, kCount); });
    std::printf(" e^%g %.2f%s", double(v), ms * 1e6 / kCount, v == -INFINITY ? "\n\n" : ",");
  }

  std::vector<Row> rows;
  int failures = 0;
  for (const Size& s : sizes) {
    attn::LayerConfig config;
    config.d_model = s.d;
    config.heads = s.heads;
    config.bias = false;
    attn::AttentionLayer layer(config);
    attn::LayerWeights weights;
    weights.in_proj_weight = uniform(3 * s.d * s.d, 7 + s.d, std::sqrt(6.0f / float(4 * s.d)));
    weights.out_proj_weight = uniform(s.d * s.d, 11 + s.d, 1.0f / std::sqrt(float(s.d)));
    layer.set_weights(weights);
    const std::vector<float> x = uniform(s.n * s.d, std::uint32_t(s.n + s.d), 1.0f);

    for (bool causal : {false, true}) {
      Row row{s, causal, 0, 0, 0, 0, 0, 0, 0, 0, 0, false};
      attn::ForwardOptions options;
      options.n = s.n;
      options.mask.kind = causal ? attn::MaskKind::Causal : attn::MaskKind::None;
      options.want_weights = true;
      row.ms = measure([&] { layer.forward(x, options); }, &row.runs);
      const attn::Matrix& kept = layer.forward(x, options).output;
      const std::vector<float> with_weights(kept.data(), kept.data() + s.n * s.d);
      options.want_weights = false;
      row.ms_out = measure([&] { layer.forward(x, options); }, &row.runs_out);
      const auto& out = layer.forward(x, options).output;
      row.diff = max_abs_diff(with_weights, std::span<const float>(out.data(), s.n * s.d));
      if (s.n <= 128) {  // the scalar reference is slow; check the small sizes against it
        attn::reference::MhaInputs in;
        in.d_model = s.d;
        in.heads = s.heads;
        in.head_dim = s.d / s.heads;
        in.n = in.kv_n = s.n;
        in.x = in.kv = x.data();
        in.in_proj_weight = weights.in_proj_weight.data();
        in.out_proj_weight = weights.out_proj_weight.data();
        in.mask = &options.mask;
        const auto ref = attn::reference::multi_head_attention(in);
        row.diff = std::max(row.diff, max_abs_diff(with_weights, ref.output));
        row.checked = true;
      }
      if (!(row.diff < 1e-4f)) ++failures;

      probe_setup(int(s.n), int(s.d), int(s.heads), causal ? 1 : 0);
      row.k_proj = measure([] { probe_projections(); });
      row.k_attn = measure([] { probe_attention(); });
      row.k_flash = measure([] { probe_flash(); });
      row.k_out = measure([] { probe_out_projection(); });
      rows.push_back(row);
      std::printf(
          "n=%zu d=%zu h=%zu %s: %.3f ms (%d runs), output-only %.3f ms (%d runs), "
          "max |diff| %.1e%s\n",
          s.n, s.d, s.heads, causal ? "causal" : "none", row.ms, row.runs, row.ms_out, row.runs_out,
          double(row.diff),
          row.checked ? " (output-only vs weights and vs reference::multi_head_attention)"
                      : " (output-only vs weights)");
    }
  }

  std::printf("\n## Results (native %s, peak %.1f GFLOP/s)\n\n", attn::simd::arch_name(), peak);
  std::printf(
      "| n | d_model | heads | mask | ms | GFLOP/s | %% peak | output-only ms | "
      "output-only GFLOP/s | output-only %% peak |\n");
  std::printf("|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    const double flops = forward_flops(double(r.size.n), double(r.size.d));
    const double g = gflops(flops, r.ms), go = gflops(flops, r.ms_out);
    std::printf("| %zu | %zu | %zu | %s | %.3f | %.1f | %.0f%% | %.3f | %.1f | %.0f%% |\n",
                r.size.n, r.size.d, r.size.heads, r.causal ? "causal" : "none", r.ms, g,
                100 * g / peak, r.ms_out, go, 100 * go / peak);
  }

  std::printf("\n## Where the time goes (the core's ops called directly, same sizes)\n\n");
  std::printf(
      "proj = X·W_inᵀ, attention = all heads' scores + fused scale/mask/softmax + A·V "
      "(materialising path),\nflash = all heads' flash_attention (output-only path), out = "
      "concat·W_Oᵀ; rest = forward (weights kept) minus proj + attention + out.\n"
      "Attention GFLOP/s count the full 4·n²·d (causal included).\n\n");
  std::printf(
      "| n | d_model | heads | mask | proj ms | proj GFLOP/s (%% peak) | attention ms | "
      "attention GFLOP/s (%% peak) | flash ms | flash GFLOP/s (%% peak) | out ms | "
      "out GFLOP/s (%% peak) | rest ms |\n");
  std::printf("|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    const double n = double(r.size.n), d = double(r.size.d);
    const double pg = gflops(2 * n * d * 3 * d, r.k_proj);
    const double ag = gflops(4 * n * n * d, r.k_attn);
    const double fg = gflops(4 * n * n * d, r.k_flash);
    const double og = gflops(2 * n * d * d, r.k_out);
    std::printf(
        "| %zu | %zu | %zu | %s | %.3f | %.1f (%.0f%%) | %.3f | %.1f (%.0f%%) | %.3f | "
        "%.1f (%.0f%%) | %.3f | %.1f (%.0f%%) | %.3f |\n",
        r.size.n, r.size.d, r.size.heads, r.causal ? "causal" : "none", r.k_proj, pg,
        100 * pg / peak, r.k_attn, ag, 100 * ag / peak, r.k_flash, fg, 100 * fg / peak, r.k_out, og,
        100 * og / peak, r.ms - (r.k_proj + r.k_attn + r.k_out));
  }
  bench_quantized_kernels();
  std::printf("\nattention_bench finished in %.1f s\n", ms_since(started) / 1000.0);
  if (failures) {
    std::fprintf(stderr, "ERROR: %d configuration(s) disagree by 1e-4 or more\n", failures);
    return 1;
  }
  return 0;
}
