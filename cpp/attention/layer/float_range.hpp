// The float32 range check of a forward: bounds on every intermediate (projections, scores,
// outputs) from the largest magnitudes of the inputs and the weights. A forward whose bounds
// stay inside float32 cannot overflow to ±inf (and from there to NaN, or to rows that look fully
// masked); one whose bounds leave it is refused with a message naming the magnitudes. Only
// absurd values are refused: d_model 4096 with |x| and |weights| up to 1e6 bounds the scores by
// about 1e34.
#pragma once

#include <cstddef>

namespace attn {

struct FloatRangeInputs {
  std::size_t d_model = 0;
  std::size_t head_dim = 0;
  std::size_t inner = 0;  // heads · head_dim, the width of the concatenated heads
  double x = 0;           // largest |x| (queries' source) after any positional encoding
  double kv = 0;          // largest |kv| (keys' and values' source), likewise
  // Largest |value| of the W_Q, W_K and W_V rows of in_proj_weight and of their biases (0
  // without biases).
  double q_weight = 0, k_weight = 0, v_weight = 0;
  double q_bias = 0, k_bias = 0, v_bias = 0;
  double out_weight = -1;  // largest |out_proj.weight|, or -1 without an output projection
  double out_bias = 0;     // largest |out_proj.bias| (0 without)
  double scale = 1;        // 1/√d_k, or 1 without scaling
  double rope = 1;         // growth of a projection under RoPE's rotations (2 with RoPE)
  // With q/k norms: the largest |q| and |k| after them (√width · max|weight|, RMSNorm's bound),
  // which replace the projections' bounds in the scores; -1 without.
  double q_norm = -1, k_norm = -1;
  double score_bias = 0;  // largest |ALiBi bias| added to a score
};

// Throws attn::Error naming the first intermediate whose bound leaves float32's range.
void check_float_range(const FloatRangeInputs& in);

}  // namespace attn
