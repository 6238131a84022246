// The next-token readout (next_tokens.hpp).
#include "attention/model/next_tokens.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attn {

std::vector<NextToken> top_next_tokens(std::span<const float> logits, std::size_t k) {
  if (logits.empty()) return {};
  const double max = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (const float l : logits) sum += std::exp(double(l) - max);
  std::vector<std::int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  const std::size_t count = std::min(k, logits.size());
  std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(count), order.end(),
                    [&](std::int32_t a, std::int32_t b) {
                      return logits[std::size_t(a)] > logits[std::size_t(b)] ||
                             (logits[std::size_t(a)] == logits[std::size_t(b)] && a < b);
                    });
  std::vector<NextToken> top(count);
  for (std::size_t i = 0; i < count; ++i) {
    top[i] = {order[i], std::exp(double(logits[std::size_t(order[i])]) - max) / sum};
  }
  return top;
}

}  // namespace attn
