// A batch of token sequences with their next-token targets: what tasks make and probes use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attn {

// batch sequences of n tokens. targets[b·n + i] is the token that should follow position i of
// sequence b (what the logits at that position are scored against), or < 0: not scored.
struct Batch {
  std::size_t batch = 0;
  std::size_t n = 0;
  std::vector<std::int32_t> ids;      // [batch, n]
  std::vector<std::int32_t> targets;  // [batch, n], < 0 = ignored
};

}  // namespace attn
