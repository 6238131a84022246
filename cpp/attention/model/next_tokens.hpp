// The next-token readout of a forward: the k most likely ids of one position's logits with their
// softmax probabilities (what the page's next-token list and generation show).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace attn {

struct NextToken {
  std::int32_t id = 0;
  double probability = 0.0;  // softmax at temperature 1, computed in double
};

// The k most likely ids of logits [vocab] (k is capped at vocab), highest first, ties by the lower
// id; probabilities are exp(l - max) / Σ exp(l - max) in double, so huge logits do not overflow.
std::vector<NextToken> top_next_tokens(std::span<const float> logits, std::size_t k);

}  // namespace attn
