// Float32 range bounds of a forward (see float_range.hpp).
#include "attention/layer/float_range.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "attention/error.hpp"

namespace attn {

namespace {

// Below float32's largest value (3.4e38) with room for the rounding of long sums.
constexpr double kLimit = 1e37;

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

[[noreturn]] void too_large(const std::string& what, double bound, const std::string& because) {
  throw Error("values too large for float32: " + what + " could reach " + number(bound) +
              ", more than the limit of " + number(kLimit) + " (float32 ends at 3.4e+38), " +
              because + "; scale the inputs or the weights down");
}

}  // namespace

void check_float_range(const FloatRangeInputs& in) {
  const double d = static_cast<double>(in.d_model);
  const WeightMagnitudes& w = in.weights;
  // |q_i| <= d · max|x| · max|W_Q| + max|b_Q| (K and V likewise from kv); RoPE's rotations mix
  // pairs of components of Q and K.
  const double q_raw = d * in.x * w.q_weight + w.q_bias;
  const double k_raw = d * in.kv * w.k_weight + w.k_bias;
  const double q = (in.q_norm >= 0 ? in.q_norm : q_raw) * in.rope;
  const double k = (in.k_norm >= 0 ? in.k_norm : k_raw) * in.rope;
  const double v = d * in.kv * w.v_weight + w.v_bias;
  const double projections = std::max({q, k, v, q_raw * in.rope, k_raw * in.rope});
  if (projections > kLimit) {
    too_large("the projections Q, K and V", projections,
              "with |x| up to " + number(std::max(in.x, in.kv)) + " and |in_proj_weight| up to " +
                  number(std::max({w.q_weight, w.k_weight, w.v_weight})));
  }
  // |q·k| <= d_k · max|q| · max|k| before scaling; softmax weights average rows of V, so
  // |context| <= max|v|.
  const double scores = static_cast<double>(in.head_dim) * q * k;
  if (std::max(scores, scores * in.scale + in.score_bias) > kLimit) {
    too_large("the attention scores Q·Kᵀ", scores,
              "with |Q| up to " + number(q) + " and |K| up to " + number(k));
  }
  if (in.out_proj) {
    const double output = static_cast<double>(in.inner) * v * w.out_weight + w.out_bias;
    if (output > kLimit) {
      too_large(
          "the output", output,
          "with |V| up to " + number(v) + " and |out_proj.weight| up to " + number(w.out_weight));
    }
  }
}

}  // namespace attn
