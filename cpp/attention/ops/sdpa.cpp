// One head of scaled dot-product attention, step by step (see sdpa.hpp).
#include "attention/ops/sdpa.hpp"

#include <algorithm>

#include "attention/ops/masks.hpp"
#include "attention/ops/matmul.hpp"
#include "attention/ops/softmax.hpp"

namespace attn {

namespace {
void snapshot(Matrix* into, ConstMatView from) {
  if (into == nullptr) return;
  into->resize(from.rows, from.cols);
  for (std::size_t i = 0; i < from.rows; ++i) {
    std::copy(from.row(i), from.row(i) + from.cols, into->row(i));
  }
}

// x = x · scale + bias (bias may be null).
void scale_and_bias(MatView x, float scale, const float* bias) {
  for (std::size_t i = 0; i < x.rows; ++i) {
    float* row = x.row(i);
    const float* bias_row = bias ? bias + i * x.cols : nullptr;
    for (std::size_t j = 0; j < x.cols; ++j) {
      row[j] = row[j] * scale + (bias_row ? bias_row[j] : 0.0f);
    }
  }
}
}  // namespace

void scaled_dot_product_attention(ConstMatView q, ConstMatView k, ConstMatView v,
                                  const SdpaParams& params, MatView weights, MatView context,
                                  AlignedVector<float>& packed, SdpaSnapshots* snapshots) {
  matmul_transposed(q, k, weights, packed);  // scores, computed in the weights buffer
  if (snapshots) snapshot(snapshots->scores, weights);
  scale_and_bias(weights, params.scale, nullptr);
  if (snapshots) snapshot(snapshots->scaled, weights);
  if (params.bias) scale_and_bias(weights, 1.0f, params.bias);
  if (params.visible) apply_mask(weights, params.visible);
  if (snapshots) snapshot(snapshots->masked, weights);
  softmax_rows(weights);
  matmul(weights, v, context);
}

}  // namespace attn
