// Softmax cross-entropy forward and backward, see cross_entropy.hpp.
#include "attention/ops/cross_entropy.hpp"

#include <algorithm>

#include "attention/ops/exp.hpp"
#include "attention/ops/vec.hpp"

namespace attn {

float cross_entropy_forward(const float* logits, const std::int32_t* targets, float* probs,
                            std::size_t rows, std::size_t vocab) {
  double total = 0.0;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* z = logits + r * vocab;
    float* p = probs + r * vocab;
    const float max = *std::max_element(z, z + vocab);
    for (std::size_t v = 0; v < vocab; ++v) p[v] = z[v] - max;
    exp_values(p, p, vocab);
    const float sum = vec::sum(p, vocab);
    vec::scale(1.0f / sum, p, vocab);
    if (targets[r] >= 0) total += double(max) + std::log(double(sum)) - double(z[targets[r]]);
  }
  const std::size_t count = count_targets(targets, rows);
  return count ? float(total / double(count)) : 0.0f;
}

void cross_entropy_backward(const float* probs, const std::int32_t* targets, float* dlogits,
                            std::size_t rows, std::size_t vocab) {
  const std::size_t count = count_targets(targets, rows);
  const float inv = count ? float(1.0 / double(count)) : 0.0f;
  for (std::size_t r = 0; r < rows; ++r) {
    float* g = dlogits + r * vocab;
    if (targets[r] < 0) {
      std::fill(g, g + vocab, 0.0f);
      continue;
    }
    if (g != probs + r * vocab) std::copy(probs + r * vocab, probs + (r + 1) * vocab, g);
    g[targets[r]] -= 1.0f;
    vec::scale(inv, g, vocab);
  }
}

}  // namespace attn
