// Peak probe and per-kernel probe shared by the native benchmark (native_bench.cpp) and the
// small wasm module scripts/bench.sh builds with emcc from peak-probe.cpp (tests/bench/bench.mjs
// loads it). Plain C functions so JavaScript can call them one at a time and time them itself.
//
//   probe_peak(chains, iters): `chains` independent xsimd::fma chains, `iters` steps each
//     (on wasm xsimd::fma is a mul + add, on AVX-512 one vfmadd). Flops = chains·iters·2·width.
//   probe_setup(n, d, heads, causal): allocates X, the packed weights and the workspace of
//     one forward the way AttentionLayer lays them out (self-attention, no biases).
//   probe_projections():   QKV = X · W_inᵀ              (2·n·d·3d flops)
//   probe_attention():     every head's scaled_dot_product_attention, the materialising path
//                          (scores, fused scale + mask + softmax, A·V; 2·2·n·n·d flops counted)
//   probe_flash():         every head's flash_attention, the output-only path (same flops)
//   probe_out_projection(): Y = concat · W_Oᵀ            (2·n·d·d flops)
//   probe_exp(value, count): attn::exp_values over `count` copies of `value` (in place; the
//     buffer is refilled first). Masked scores reach the softmax's exp as -inf, so comparing
//     value 0 with value -inf shows what a masked cell costs there.
//   probe_output(): the Y buffer (n·d floats) so callers can check the probe did real work.
#pragma once

#include <cstddef>

extern "C" {
float probe_peak(int chains, int iters);
int probe_width();  // floats per SIMD register (1 without SIMD)
void probe_setup(int n, int d, int heads, int causal);
void probe_projections();
void probe_attention();
void probe_flash();
void probe_out_projection();
float probe_exp(float value, int count);
const float* probe_output();
}
