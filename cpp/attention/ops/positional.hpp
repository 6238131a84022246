// Positional information: sinusoidal and learned encodings added to the input, rotary
// embeddings (RoPE) applied to queries and keys, and ALiBi's linear distance bias on scores.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "attention/ops/rope.hpp"  // RoPE: apply_rope, rope_angle
#include "attention/option_kinds.hpp"
#include "attention/tensor.hpp"

namespace attn {

// True for the encodings added to the input (sinusoidal, learned); RoPE and ALiBi act later.
inline bool is_additive(PositionalKind kind) {
  return kind == PositionalKind::Sinusoidal || kind == PositionalKind::Learned;
}

// The angles, one definition each (the encodings below and the cell explanations use them):
// sinusoidal column c of position pos has angle pos / 10000^{2i/d_model}, i = ⌊c/2⌋;
inline double sinusoid_denominator(std::size_t pair, std::size_t d_model) {
  return std::pow(10000.0, 2.0 * pair / static_cast<double>(d_model));
}
inline double sinusoid_angle(std::size_t pos, std::size_t col, std::size_t d_model) {
  return static_cast<double>(pos) / sinusoid_denominator(col / 2, d_model);
}
// out [n, d]: the sinusoidal table of "Attention Is All You Need" for positions 0..n-1,
// computed in double and rounded once (so it equals NumPy's to float precision).
void sinusoidal_encoding(MatView out);

// out [n, d]: rows 0..n-1 of a seeded table (row p does not depend on n).
void learned_encoding(MatView out, std::uint32_t seed);

// ALiBi slopes for `heads` heads (Press et al.): 2^{-8h/H} for h = 1..H when H is a power of
// two, interleaved from the next power of two otherwise.
std::vector<float> alibi_slopes(std::size_t heads);

// bias [n, kv_n]: bias_ij = -slope · |i - j|.
void alibi_bias(MatView bias, float slope);

}  // namespace attn
