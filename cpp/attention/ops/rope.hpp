// Rotary position embedding (RoPE): the one angle function and rotation of the core, in both
// conventions a model may use: interleaved pairs (2i, 2i+1) (RoFormer; the walkthrough's layer and
// the small model) and rotate_half pairs (i, i + d_k/2) (Hugging Face's Llama family: q·cos +
// rotate_half(q)·sin with cos/sin = cat(freqs, freqs)). Pair i at position t turns by t·θ_i,
// θ_i = base^(−2i/d_k); cos and sin are computed in double and rounded to T once. Forward on one
// head's [n, d_k] or on a packed qkv buffer, and the backward (the rotation by the negative angle).
#pragma once

#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attention/error.hpp"
#include "attention/name_table.hpp"
#include "attention/ops/attention_shape.hpp"
#include "attention/tensor.hpp"

namespace attn {

enum class RopePairing {
  Interleaved,  // (x_{2i}, x_{2i+1})
  RotateHalf,   // (x_i, x_{i + d_k/2})
};

inline constexpr double kRopeBase = 10000.0;

// "interleaved" | "rotate-half" (an empty name: interleaved); anything else throws, naming both.
inline RopePairing parse_rope_pairing(std::string_view name) {
  if (name.empty() || name == "interleaved") return RopePairing::Interleaved;
  if (name == "rotate-half") return RopePairing::RotateHalf;
  throw Error("rope.pairing must be 'interleaved' or 'rotate-half', got '" +
              std::string(name.substr(0, 40)) + "'");
}
inline const char* rope_pairing_name(RopePairing pairing) {
  return pairing == RopePairing::RotateHalf ? "rotate-half" : "interleaved";
}
// The pairings by name, in order (the catalog's list of them).
inline std::span<const NamedKind<RopePairing>> rope_pairings() {
  static constexpr NamedKind<RopePairing> table[] = {{"interleaved", RopePairing::Interleaved},
                                                     {"rotate-half", RopePairing::RotateHalf}};
  return table;
}

// θ_i = base^(−2i/d_k), and the angle pos·θ_i.
inline double rope_frequency(std::size_t pair, std::size_t d_k, double base = kRopeBase) {
  return std::pow(base, -2.0 * pair / static_cast<double>(d_k));
}
inline double rope_angle(std::size_t pos, std::size_t pair, std::size_t d_k,
                         double base = kRopeBase) {
  return static_cast<double>(pos) * rope_frequency(pair, d_k, base);
}

// A checkpoint's rope_scaling: none, Llama 3's (Llama 3.1 and 3.2), or linear (θ_i / factor:
// Gemma 3's larger models).
enum class RopeScaling { None, Llama3, Linear };
inline const char* rope_scaling_name(RopeScaling scaling) {
  constexpr const char* names[] = {"none", "llama3", "linear"};  // by RopeScaling
  return names[static_cast<std::size_t>(scaling)];
}

// How a model turns its pairs: the pairing, the base, how many of a head's columns turn, and —
// when a checkpoint rescales them (Llama 3's or linear rope_scaling) — every pair's θ_i instead
// of base^(−2i/r).
struct RopeSpec {
  RopePairing pairing = RopePairing::Interleaved;
  double base = kRopeBase;
  std::vector<double> frequencies;          // [r / 2] when given; empty: the base's
  std::size_t rotary_dims = 0;              // r: the first r columns of each head turn; 0: all d_k
  RopeScaling scaling = RopeScaling::None;  // which rope_scaling gave `frequencies` (the reader's)

  bool operator==(const RopeSpec&) const = default;

  // r for a head d_k wide.
  std::size_t rotated(std::size_t d_k) const { return rotary_dims != 0 ? rotary_dims : d_k; }
  // θ of pair i of the r rotated columns.
  double frequency(std::size_t pair, std::size_t r) const {
    return frequencies.empty() ? rope_frequency(pair, r, base) : frequencies[pair];
  }
};

// Llama 3's rope_scaling (transformers' _compute_llama3_parameters, in double): pairs whose
// wavelength 2π/θ_i is above original_context / low_factor turn `factor` times slower, those below
// original_context / high_factor keep θ_i, and those between are blended by
// s = (original_context / wavelength − low_factor) / (high_factor − low_factor):
// θ = (1 − s)·θ/factor + s·θ.
struct Llama3RopeScaling {
  double factor = 8.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  double original_context = 8192.0;  // original_max_position_embeddings
};
inline std::vector<double> llama3_rope_frequencies(std::size_t d_k, double base,
                                                   const Llama3RopeScaling& scaling) {
  const double pi = 3.14159265358979323846;
  const double low_wavelength = scaling.original_context / scaling.low_freq_factor;
  const double high_wavelength = scaling.original_context / scaling.high_freq_factor;
  std::vector<double> frequencies(d_k / 2);
  for (std::size_t i = 0; i < frequencies.size(); ++i) {
    const double theta = rope_frequency(i, d_k, base);
    const double wavelength = 2.0 * pi / theta;
    if (wavelength > low_wavelength) {
      frequencies[i] = theta / scaling.factor;
    } else if (wavelength < high_wavelength) {
      frequencies[i] = theta;
    } else {
      const double s = (scaling.original_context / wavelength - scaling.low_freq_factor) /
                       (scaling.high_freq_factor - scaling.low_freq_factor);
      frequencies[i] = (1.0 - s) * theta / scaling.factor + s * theta;
    }
  }
  return frequencies;
}

// The two columns pair i turns: (2i, 2i+1) or (i, i + d_k/2).
inline std::size_t rope_first(std::size_t pair, RopePairing pairing) {
  return pairing == RopePairing::Interleaved ? 2 * pair : pair;
}
inline std::size_t rope_second(std::size_t pair, std::size_t d_k, RopePairing pairing) {
  return pairing == RopePairing::Interleaved ? 2 * pair + 1 : pair + d_k / 2;
}

// cos and sign·sin of every position's and pair's angle: [n, d_k / 2] each (d_k: the rotated
// columns, spec.rotated(head width)).
template <class T>
struct RopeTables {
  std::vector<T> cos, sin;
  // Positions first … first + n − 1.
  RopeTables(std::size_t n, std::size_t d_k, int sign, const RopeSpec& spec, std::size_t first = 0)
      : cos(n * (d_k / 2)), sin(n * (d_k / 2)) {
    const std::size_t half = d_k / 2;
    for (std::size_t t = 0; t < n; ++t) {
      for (std::size_t i = 0; i < half; ++i) {
        const double angle = static_cast<double>(first + t) * spec.frequency(i, d_k);
        cos[t * half + i] = T(std::cos(angle));
        sin[t * half + i] = T(sign * std::sin(angle));
      }
    }
  }
  RopeTables(std::size_t n, std::size_t d_k, int sign = 1, double base = kRopeBase)
      : RopeTables(n, d_k, sign,
                   RopeSpec{RopePairing::Interleaved, base, {}, 0, RopeScaling::None}) {}
};

// One head's d_k values at position t, in place, by the tables' row t.
template <class T>
void rope_rotate_head(T* x, std::size_t d_k, const RopeTables<T>& tables, std::size_t t,
                      RopePairing pairing) {
  const std::size_t half = d_k / 2;
  const T* c = tables.cos.data() + t * half;
  const T* s = tables.sin.data() + t * half;
  for (std::size_t i = 0; i < half; ++i) {
    T& a = x[rope_first(i, pairing)];
    T& b = x[rope_second(i, d_k, pairing)];
    const T x0 = a, x1 = b;
    a = x0 * c[i] - x1 * s[i];
    b = x0 * s[i] + x1 * c[i];
  }
}

// In place on x [n, d_k] (the rotated columns r = spec.rotated(d_k) even and at most d_k; throws
// otherwise): row pos's first r columns turned by pos·θ_i, the rest kept.
inline void apply_rope(MatView x, const RopeSpec& spec) {
  const std::size_t r = spec.rotated(x.cols);
  if (spec.rotary_dims == 0 && x.cols % 2 != 0) {
    throw Error("RoPE rotates pairs of dimensions: it needs an even d_k, got " +
                std::to_string(x.cols));
  }
  if (r % 2 != 0 || r > x.cols) {
    throw Error(
        "RoPE rotates pairs of dimensions: it needs an even number of rotated columns "
        "within d_k " +
        std::to_string(x.cols) + ", got " + std::to_string(r));
  }
  const RopeTables<float> tables(x.rows, r, 1, spec);
  for (std::size_t pos = 0; pos < x.rows; ++pos) {
    rope_rotate_head(x.row(pos), r, tables, pos, spec.pairing);
  }
}
inline void apply_rope(MatView x, RopePairing pairing = RopePairing::Interleaved,
                       double base = kRopeBase) {
  apply_rope(x, RopeSpec{pairing, base, {}, 0, RopeScaling::None});
}

namespace reference {

// In place on qkv [batch·n, shape.row()] (AttentionShape's layout: the query heads, then the key
// heads, head_dim columns each), positions first … first + n − 1: each head's first
// spec.rotated(head_dim) columns (even) turn, the rest stay. sign +1 rotates (forward), −1 rotates
// back (backward: the gradient of a rotation is the inverse rotation of the gradient).
template <class T>
void rope_rotate(T* qkv, std::size_t batch, std::size_t n, const AttentionShape& shape, int sign,
                 const RopeSpec& spec, std::size_t first = 0) {
  const std::size_t dk = shape.head_dim, r = spec.rotated(dk);
  const RopeTables<T> tables(n, r, sign, spec, first);
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t t = 0; t < n; ++t) {
      T* row = qkv + (b * n + t) * shape.row();
      for (std::size_t h = 0; h < shape.heads + shape.kv_heads; ++h) {  // q's heads, then k's
        rope_rotate_head(row + h * dk, r, tables, t, spec.pairing);
      }
    }
  }
}

// The small models' layout: qkv [batch·n, 3·d] (q | k | v; head h at columns h·d_k of q and of
// k), d_k = d / heads even, interleaved pairs unless told.
template <class T>
void rope_rotate(T* qkv, std::size_t batch, std::size_t n, std::size_t d, std::size_t heads,
                 int sign, RopePairing pairing = RopePairing::Interleaved,
                 double base = kRopeBase) {
  rope_rotate(qkv, batch, n, AttentionShape::multi_head(d, heads), sign,
              RopeSpec{pairing, base, {}, 0, RopeScaling::None});
}

}  // namespace reference

// The float forward and backward (scalar: a pairwise rotation of 2·d values per row is a small
// fraction of a step's work).
inline void rope_forward(float* qkv, std::size_t batch, std::size_t n, std::size_t d,
                         std::size_t heads) {
  reference::rope_rotate(qkv, batch, n, d, heads, +1);
}
inline void rope_backward(float* dqkv, std::size_t batch, std::size_t n, std::size_t d,
                          std::size_t heads) {
  reference::rope_rotate(dqkv, batch, n, d, heads, -1);
}
inline void rope_forward(float* qkv, std::size_t batch, std::size_t n, const AttentionShape& shape,
                         const RopeSpec& spec, std::size_t first = 0) {
  reference::rope_rotate(qkv, batch, n, shape, +1, spec, first);
}
inline void rope_backward(float* dqkv, std::size_t batch, std::size_t n,
                          const AttentionShape& shape, const RopeSpec& spec) {
  reference::rope_rotate(dqkv, batch, n, shape, -1, spec);
}

}  // namespace attn
