// Peak and per-kernel probes (see peak-probe.hpp). Compiled into the native attention_bench
// (CMake globs tests/bench/*.cpp) and, by scripts/bench.sh, with emcc into
// build/bench/peak-probe.mjs against build/wasm-release's libattention_core.a.
#include "peak-probe.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

#include "attention/ops/exp.hpp"
#include "attention/ops/flash.hpp"
#include "attention/ops/masks.hpp"
#include "attention/ops/matmul.hpp"
#include "attention/ops/sdpa.hpp"
#include "attention/ops/simd.hpp"
#include "attention/tensor.hpp"

#if defined(__EMSCRIPTEN__)
#define PROBE_EXPORT __attribute__((used, visibility("default")))
#else
#define PROBE_EXPORT
#endif

namespace {

#if ATTN_SIMD
using attn::simd::Floats;

// `Chains` independent acc = acc·m + c recurrences; the result depends on all of them, so
// nothing can be removed, and no chain waits for another.
template <int Chains>
float fma_chains(int iters) {
  Floats acc[Chains];
  for (int k = 0; k < Chains; ++k) acc[k] = Floats(1.0f + 0.01f * float(k));
  const Floats m(0.999999f);
  const Floats c(1e-6f);
  for (int i = 0; i < iters; ++i) {
    for (int k = 0; k < Chains; ++k) acc[k] = xsimd::fma(acc[k], m, c);
  }
  Floats sum = acc[0];
  for (int k = 1; k < Chains; ++k) sum += acc[k];
  return xsimd::reduce_add(sum);
}
#else
template <int Chains>
float fma_chains(int iters) {
  float acc[Chains];
  for (int k = 0; k < Chains; ++k) acc[k] = 1.0f + 0.01f * float(k);
  for (int i = 0; i < iters; ++i) {
    for (int k = 0; k < Chains; ++k) acc[k] = acc[k] * 0.999999f + 1e-6f;
  }
  float sum = 0.0f;
  for (int k = 0; k < Chains; ++k) sum += acc[k];
  return sum;
}
#endif

struct Problem {
  std::size_t n = 0, d = 0, heads = 0;
  attn::Matrix x, qkv, concat, weights, output;
  attn::PackedMatrix w_in, w_out;  // W_inᵀ [d, 3d] and W_Oᵀ [d, d], packed once (as the layer)
  attn::MaskSpec mask;
  attn::SdpaWorkspace sdpa;
  attn::FlashWorkspace flash;
};
Problem problem;

// Deterministic values in [-scale, scale).
void fill(attn::Matrix& m, std::uint32_t seed, float scale) {
  std::uint32_t state = seed * 2654435761u + 12345u;
  for (std::size_t i = 0; i < m.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    m.data()[i] = scale * (float(state >> 8) / float(1u << 24) * 2.0f - 1.0f);
  }
}

attn::LogitParams logit_params() {
  attn::LogitParams params;
  params.scale = float(1.0 / std::sqrt(double(problem.d / problem.heads)));
  params.mask = attn::masks_anything(problem.mask) ? &problem.mask : nullptr;
  return params;
}

// Each head's query, key and value column blocks of the projections and its block of the
// concatenated heads, given to `run` (the per-head loop of the layer's attention).
template <class Run>
void for_each_head(Run run) {
  Problem& p = problem;
  const std::size_t dk = p.d / p.heads;
  const attn::MatView all = p.qkv.view();
  for (std::size_t h = 0; h < p.heads; ++h) {
    run(all.col_block(h * dk, dk), all.col_block(p.d + h * dk, dk),
        all.col_block(2 * p.d + h * dk, dk), p.concat.view().col_block(h * dk, dk));
  }
}

// fma_chains<N> run for the N of `Counts` that equals `chains` (a runtime count to the template's
// compile-time one); NaN for a count not listed.
template <int... Counts>
float fma_chains_of(int chains, int iters) {
  float result = std::nanf("");
  (void)((chains == Counts && (result = fma_chains<Counts>(iters), true)) || ...);
  return result;
}

}  // namespace

extern "C" {

PROBE_EXPORT float probe_peak(int chains, int iters) {
  return fma_chains_of<4, 6, 8, 10, 12, 14, 16, 20, 24>(chains, iters);
}

PROBE_EXPORT int probe_width() {
  return int(attn::simd::kWidth);
}

PROBE_EXPORT void probe_setup(int n, int d, int heads, int causal) {
  Problem& p = problem;
  p.n = std::size_t(n);
  p.d = std::size_t(d);
  p.heads = std::size_t(heads);
  p.x.resize(p.n, p.d);
  p.qkv.resize(p.n, 3 * p.d);
  p.concat.resize(p.n, p.d);
  p.weights.resize(p.n, p.n);
  p.output.resize(p.n, p.d);
  fill(p.x, 1, 1.0f);
  attn::Matrix w_in(p.d, 3 * p.d), w_out(p.d, p.d);
  fill(w_in, 2, std::sqrt(6.0f / float(4 * p.d)));
  fill(w_out, 3, 1.0f / std::sqrt(float(p.d)));
  attn::pack_matrix(w_in, p.w_in);
  attn::pack_matrix(w_out, p.w_out);
  p.mask = attn::MaskSpec{};
  p.mask.kind = causal ? attn::MaskKind::Causal : attn::MaskKind::None;
  probe_projections();  // so attention and the output projection see real Q, K, V
  probe_attention();
}

PROBE_EXPORT void probe_projections() {
  Problem& p = problem;
  attn::matmul_packed(p.x, p.w_in, p.qkv);
}

PROBE_EXPORT void probe_attention() {
  const attn::LogitParams params = logit_params();
  for_each_head([&](attn::MatView q, attn::MatView k, attn::MatView v, attn::MatView context) {
    attn::scaled_dot_product_attention(q, k, v, params, problem.weights, context, problem.sdpa);
  });
}

PROBE_EXPORT void probe_flash() {
  const attn::LogitParams params = logit_params();
  for_each_head([&](attn::MatView q, attn::MatView k, attn::MatView v, attn::MatView context) {
    attn::flash_attention(q, k, v, params, context, problem.flash);
  });
}

PROBE_EXPORT void probe_out_projection() {
  Problem& p = problem;
  attn::matmul_packed(p.concat, p.w_out, p.output);
}

PROBE_EXPORT float probe_exp(float value, int count) {
  static attn::AlignedVector<float> values;
  values.assign(std::size_t(count), value);
  attn::exp_values(values.data(), values.data(), values.size());
  return values.empty() ? 0.0f : values[0];
}

PROBE_EXPORT const float* probe_output() {
  return problem.output.data();
}

}  // extern "C"
