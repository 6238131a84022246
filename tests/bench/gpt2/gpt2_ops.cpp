// Per-op profile of the GPT-2-small forward's matmuls and attention (wasm or native), for
// gpt2-bench.
//
// Times, at m = 64 and 256 rows, each linear_forward shape of one GPT-2-small layer (c_attn
// 768→2304, attn c_proj 768→768, c_fc 768→3072, mlp c_proj 3072→768) and the unembedding
// (768→50 257), split into its two parts: pack_transposed (Wᵀ into panels, done on every call)
// and matmul_packed; and causal_attention_forward (12 heads). Totals ×12 layers + unembedding.
// Not in CMake's tests/bench/*.cpp glob; build by hand (wasm, as the module's flags):
//   em++ -O3 -DNDEBUG -msimd128 -DATTN_SIMD=1 -fwasm-exceptions -std=c++20 -Icpp \
//     -isystem .deps/prefix/usr/include -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB
//     -sENVIRONMENT=node \
//     tests/bench/gpt2/gpt2_ops.cpp
//     cpp/attention/ops/{linear,matmul,causal_attention,exp,gelu,layernorm}.cpp \ -o
//     build/gpt2-ops.cjs && node --no-experimental-fetch build/gpt2-ops.cjs
#include <chrono>
#include <cstdio>
#include <vector>

#include "attention/ops/causal_attention.hpp"
#include "attention/ops/gelu.hpp"
#include "attention/ops/layernorm.hpp"
#include "attention/ops/linear.hpp"
#include "attention/ops/matmul.hpp"

namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

std::vector<float> filled(std::size_t count, float scale) {
  std::vector<float> v(count);
  unsigned state = 12345;
  for (auto& x : v) {
    state = state * 1664525u + 1013904223u;
    x = scale * (float((state >> 8) & 0xffff) / 32768.0f - 1.0f);
  }
  return v;
}

struct Shape {
  const char* name;
  std::size_t in, out, times;  // times per forward
};

}  // namespace

int main() {
  const Shape shapes[] = {{"c_attn 768->2304", 768, 2304, 12},
                          {"attn.c_proj 768->768", 768, 768, 12},
                          {"mlp.c_fc 768->3072", 768, 3072, 12},
                          {"mlp.c_proj 3072->768", 3072, 768, 12},
                          {"unembed 768->50257", 768, 50257, 1}};
  const int reps = 3;
  for (std::size_t m : {std::size_t(64), std::size_t(256)}) {
    std::printf("m = %zu rows (ms per call, median-free mean of %d after a warm-up)\n", m, reps);
    double pack_total = 0, mul_total = 0;
    for (const Shape& s : shapes) {
      auto x = filled(m * s.in, 1.0f), w = filled(s.out * s.in, 0.02f), b = filled(s.out, 0.02f);
      std::vector<float> y(m * s.out);
      attn::PackedMatrix packed;
      attn::pack_transposed(attn::ConstMatView(w.data(), s.out, s.in), packed);
      attn::matmul_packed(attn::ConstMatView(x.data(), m, s.in), packed,
                          attn::MatView(y.data(), m, s.out), b.data());
      auto t = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r)
        attn::pack_transposed(attn::ConstMatView(w.data(), s.out, s.in), packed);
      const double pack = ms_since(t) / reps;
      t = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r)
        attn::matmul_packed(attn::ConstMatView(x.data(), m, s.in), packed,
                            attn::MatView(y.data(), m, s.out), b.data());
      const double mul = ms_since(t) / reps;
      const double gflops = 2.0 * double(m) * double(s.in) * double(s.out) / mul / 1e6;
      std::printf("  %-22s pack %7.2f  matmul %7.2f (%5.1f GFLOP/s)  x%zu -> %7.1f ms\n", s.name,
                  pack, mul, gflops, s.times, (pack + mul) * double(s.times));
      pack_total += pack * double(s.times);
      mul_total += mul * double(s.times);
    }
    const std::size_t d = 768, heads = 12;
    auto qkv = filled(m * 3 * d, 1.0f);
    std::vector<float> att(heads * m * m), ctx(m * d);
    attn::AttentionScratch scratch;
    attn::causal_attention_forward(qkv.data(), att.data(), ctx.data(), 1, m, d, heads, scratch);
    auto t = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r)
      attn::causal_attention_forward(qkv.data(), att.data(), ctx.data(), 1, m, d, heads, scratch);
    const double attention = ms_since(t) / reps;
    std::printf("  causal attention (12 heads) %7.2f x12 -> %7.1f ms\n", attention, attention * 12);
    auto fc = filled(m * 4 * d, 1.0f);
    std::vector<float> gelu(m * 4 * d);
    attn::gelu_forward(fc.data(), gelu.data(), fc.size(), attn::GeluKind::Tanh);
    t = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r)
      attn::gelu_forward(fc.data(), gelu.data(), fc.size(), attn::GeluKind::Tanh);
    const double gelu_ms = ms_since(t) / reps;
    std::printf("  gelu (tanh) [m, 3072]       %7.2f x12 -> %7.1f ms\n", gelu_ms, gelu_ms * 12);
    auto x = filled(m * d, 1.0f), lw = filled(d, 1.0f), lb = filled(d, 0.02f);
    std::vector<float> ln(m * d), mean(m), rstd(m);
    attn::layernorm_forward(x.data(), lw.data(), lb.data(), ln.data(), mean.data(), rstd.data(), m,
                            d);
    t = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r)
      attn::layernorm_forward(x.data(), lw.data(), lb.data(), ln.data(), mean.data(), rstd.data(),
                              m, d);
    const double ln_ms = ms_since(t) / reps;
    std::printf("  layernorm [m, 768]          %7.2f x25 -> %7.1f ms\n", ln_ms, ln_ms * 25);
    const double rest = attention * 12 + gelu_ms * 12 + ln_ms * 25;
    std::printf(
        "  total: packing %.0f ms, matmuls %.0f ms, attention + gelu + layernorm %.0f ms = %.0f "
        "ms\n\n",
        pack_total, mul_total, rest, pack_total + mul_total + rest);
  }
}
