// Attention rollout (attention_rollout.hpp).
#include "attention/model/attention_rollout.hpp"

#include <algorithm>

#include "attention/error.hpp"

namespace attn {

std::vector<float> attention_rollout(Model& model, std::span<const std::int32_t> ids) {
  if (ids.empty()) throw Error("attention rollout needs at least one token id, got none");
  const ModelConfig& config = model.config();
  const std::size_t n = ids.size(), L = config.layers;
  model.forward(ids, 1, n, ForwardRun{std::nullopt, nullptr, false});

  std::vector<float> out(L * n * n);
  std::vector<double> step(n * n), joint(n * n), next(n * n);  // Â_l, R_{l−1}, R_l: [n, n]
  for (std::size_t l = 0; l < L; ++l) {
    const std::size_t heads = attention_shape(config, l).heads;
    const float* att = model.activations(l).att.data();  // [heads, n, n], causal
    // Â_l = 0.5 · mean_h A + 0.5 · I, each row renormalised (it sums to 1 up to rounding).
    std::fill(step.begin(), step.end(), 0.0);
    for (std::size_t h = 0; h < heads; ++h) {
      for (std::size_t i = 0; i < n * n; ++i) step[i] += double(att[h * n * n + i]);
    }
    for (std::size_t i = 0; i < n; ++i) {
      double* row = &step[i * n];
      double sum = 0.0;
      for (std::size_t j = 0; j <= i; ++j) {
        row[j] = 0.5 * row[j] / double(heads) + (j == i ? 0.5 : 0.0);
        sum += row[j];
      }
      for (std::size_t j = 0; j <= i; ++j) row[j] /= sum;
    }
    // R_l = Â_l · R_{l−1}: both lower triangular, so R_l[i][j] sums k = j … i.
    if (l == 0) {
      next = step;
    } else {
      std::fill(next.begin(), next.end(), 0.0);
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t k = 0; k <= i; ++k) {
          const double a = step[i * n + k];
          if (a == 0.0) continue;
          const double* from = &joint[k * n];
          double* to = &next[i * n];
          for (std::size_t j = 0; j <= k; ++j) to[j] += a * from[j];
        }
      }
    }
    std::swap(joint, next);
    std::transform(joint.begin(), joint.end(), out.begin() + std::ptrdiff_t(l * n * n),
                   [](double v) { return float(v); });
  }
  return out;
}

}  // namespace attn
