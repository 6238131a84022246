// The kernels over weights kept quantized (ops/quantized_linear) timed at a SmolLM2-135M-sized
// matrix, W [576, 1536] (its ffn_down: in = 1536 is whole K-quant blocks): for each format the
// one-row kernel (a generation step's y = W·x) as weight bytes streamed per second — over enough
// copies of W (>= 256 MB) that each call reads them from memory, not a cache — and the prompt
// kernel (64 rows) in GFLOP/s; the float32 and BF16 packed paths beside them; 1 and 2 threads.
#include "quantized-kernels.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "attention/ops/half.hpp"
#include "attention/ops/linear.hpp"
#include "attention/ops/quantized_linear.hpp"
#include "attention/ops/quantized_weights.hpp"
#include "attention/ops/simd.hpp"
#include "attention/parallel.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kOut = 576, kIn = 1536, kPromptRows = 64;
constexpr std::size_t kStreamBytes = std::size_t{256} << 20;  // per sweep of the one-row kernel

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Median ms of fn() over >= 7 runs and >= 200 ms, after a warm-up call.
template <class Fn>
double median_ms(Fn&& fn) {
  fn();
  std::vector<double> times;
  const auto start = Clock::now();
  while (times.size() < 7 || ms_since(start) < 200.0) {
    const auto t = Clock::now();
    fn();
    times.push_back(ms_since(t));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Random blocks of `type` with finite scales (as tests/cpp/test_quantized_linear.cpp writes them).
attn::QuantizedMatrix random_matrix(attn::GgmlType type, std::mt19937& rng) {
  const attn::GgmlTypeInfo& info = attn::ggml_type_info(type);
  attn::QuantizedMatrix w(type, kOut, kIn);
  std::vector<std::uint8_t> block(info.block_bytes);
  std::uniform_int_distribution<int> byte(0, 255), mantissa(0, 1023);
  const auto half = [&](std::uint8_t* at) {
    const int bits = (8 << 10) | mantissa(rng);  // ~0.004 … 0.008
    at[0] = std::uint8_t(bits & 0xFF);
    at[1] = std::uint8_t(bits >> 8);
  };
  for (std::size_t r = 0; r < kOut; ++r) {
    for (std::size_t b = 0; b < w.blocks_per_row(); ++b) {
      for (auto& v : block) v = std::uint8_t(byte(rng));
      if (type == attn::GgmlType::Q6_K) {
        half(block.data() + 208);
      } else {
        half(block.data());
        if (attn::quantized_layout(type).has_m) half(block.data() + 2);
      }
      w.set_block(r, b, block.data());
    }
  }
  return w;
}

struct Timing {
  double row_gbps, row_gweights, prompt_gflops;
};

// forward(copy, x, y, m): one product with W copy `copy`.
template <class Forward>
Timing time_format(std::size_t bytes_per_copy, std::size_t copies, Forward&& forward) {
  std::vector<float> x(kPromptRows * kIn), y(kPromptRows * kOut);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (auto& v : x) v = normal(rng);
  const double sweep = median_ms([&] {
    for (std::size_t c = 0; c < copies; ++c) forward(c, x.data(), y.data(), 1);
  });
  const double prompt = median_ms([&] { forward(0, x.data(), y.data(), kPromptRows); });
  return {double(bytes_per_copy * copies) / sweep / 1e6, double(kOut * kIn * copies) / sweep / 1e6,
          2.0 * kPromptRows * kIn * kOut / prompt / 1e6};
}

}  // namespace

void bench_quantized_kernels() {
#if defined(__EMSCRIPTEN__)
  const char* build = "";  // build/wasm-release/quantized-kernels.cjs: arch_name() says "wasm"
#else
  const char* build = "native ";
#endif
  std::printf("\n## Quantized weights: one-row and prompt kernels (%s%s), W [%zu, %zu]\n\n", build,
              attn::simd::arch_name(), kOut, kIn);
  std::printf(
      "One row: y = W·x over copies of W totalling >= %zu MB (read from memory), weight bytes "
      "per second and weights per second; prompt: %zu rows, GFLOP/s (2·rows·in·out / time).\n\n",
      kStreamBytes >> 20, kPromptRows);
  std::printf(
      "| format | bytes/weight | threads | one row GB/s | one row Gweights/s | prompt GFLOP/s "
      "|\n|---|---:|---:|---:|---:|---:|\n");
  std::mt19937 rng(34);
  const auto report = [](const char* name, double bytes_per_weight, std::size_t threads,
                         const Timing& t) {
    std::printf("| %s | %.4f | %zu | %.2f | %.2f | %.1f |\n", name, bytes_per_weight, threads,
                t.row_gbps, t.row_gweights, t.prompt_gflops);
  };
  const std::size_t max_threads = std::min<std::size_t>(2, attn::max_threads());
  // float32 and BF16: PackedLinear, as a model packs them once
  {
    std::vector<float> w(kOut * kIn);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    for (auto& v : w) v = normal(rng);
    std::vector<std::uint16_t> bf16(w.size());
    for (std::size_t i = 0; i < w.size(); ++i) {  // the top half of each float (a bench)
      std::uint32_t bits;
      std::memcpy(&bits, &w[i], 4);
      bf16[i] = std::uint16_t(bits >> 16);
    }
    for (const bool is_bf16 : {false, true}) {
      const std::size_t bytes = is_bf16 ? kOut * kIn * 2 : kOut * kIn * 4;
      const std::size_t copies = (kStreamBytes + bytes - 1) / bytes;
      std::vector<attn::PackedLinear> packed(copies);
      for (auto& p : packed) {
        p.pack(is_bf16 ? attn::StoredWeights(bf16.data(), attn::HalfKind::BF16)
                       : attn::StoredWeights(w.data()),
               kIn, kOut);
      }
      for (std::size_t threads = 1; threads <= max_threads; ++threads) {
        attn::set_thread_count(threads);
        const Timing t =
            time_format(bytes, copies, [&](std::size_t c, const float* x, float* y, std::size_t m) {
              packed[c].forward(x, nullptr, y, m);
            });
        report(is_bf16 ? "BF16" : "F32", is_bf16 ? 2.0 : 4.0, threads, t);
      }
    }
  }
  const attn::GgmlType types[] = {attn::GgmlType::Q8_0, attn::GgmlType::Q6_K, attn::GgmlType::Q5_1,
                                  attn::GgmlType::Q5_K, attn::GgmlType::Q5_0, attn::GgmlType::Q4_1,
                                  attn::GgmlType::Q4_K, attn::GgmlType::Q4_0};
  for (const attn::GgmlType type : types) {
    const attn::QuantizedMatrix first = random_matrix(type, rng);
    const std::size_t bytes = first.bytes();
    const std::size_t copies = (kStreamBytes + bytes - 1) / bytes;
    std::vector<attn::QuantizedMatrix> matrices(copies, first);
    for (std::size_t threads = 1; threads <= max_threads; ++threads) {
      attn::set_thread_count(threads);
      const Timing t =
          time_format(bytes, copies, [&](std::size_t c, const float* x, float* y, std::size_t m) {
            attn::quantized_linear_forward(x, matrices[c], nullptr, y, m, kOut);
          });
      report(attn::ggml_type_name(type), double(bytes) / double(kOut * kIn), threads, t);
    }
  }
  attn::set_thread_count(1);
}
