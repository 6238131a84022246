// The float32 range check of a forward: bounds on every intermediate (projections, scores,
// outputs) from the largest magnitudes of the inputs and the weights. A forward whose bounds
// stay inside float32 cannot overflow to ±inf (and from there to NaN, or to rows that look fully
// masked); one whose bounds leave it is refused with a message naming the magnitudes. Only
// absurd values are refused: d_model 4096 with |x| and |weights| up to 1e6 bounds the scores by
// about 1e34.
#pragma once

#include <cstddef>

#include "attention/layer/weights.hpp"

namespace attn {

struct FloatRangeInputs {
  std::size_t d_model = 0;
  std::size_t head_dim = 0;
  std::size_t inner = 0;     // heads · head_dim, the width of the concatenated heads
  double x = 0;              // largest |x| (queries' source) after any positional encoding
  double kv = 0;             // largest |kv| (keys' and values' source), likewise
  WeightMagnitudes weights;  // largest |value| of each block of the layer's weights (0 without)
  bool out_proj = true;      // false: no output projection (out_proj's magnitudes not read)
  double scale = 1;          // 1/√d_k, or 1 without scaling
  double rope = 1;           // growth of a projection under RoPE's rotations (2 with RoPE)
  // With q/k norms: the largest |q| and |k| after them (√width · max|weight|, RMSNorm's bound),
  // which replace the projections' bounds in the scores; -1 without.
  double q_norm = -1, k_norm = -1;
  double score_bias = 0;  // largest |ALiBi bias| added to a score
};

// Throws attn::Error naming the first intermediate whose bound leaves float32's range.
void check_float_range(const FloatRangeInputs& in);

}  // namespace attn
