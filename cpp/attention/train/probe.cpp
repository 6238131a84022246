// The default and the caller's probe batches (probe.hpp).
#include "attention/train/probe.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "attention/error.hpp"
#include "attention/train/head_scores.hpp"

namespace attn {

Batch model_probe(const ModelConfig& config) {
  if (config.context < 4) {
    throw Error(
        "the default probe needs a context of at least 4 tokens (2 and their repeat), got " +
        std::to_string(config.context) + "; pass your own probe");
  }
  if (config.checkpoint) {
    return induction_probe(kProbeSeed, std::min(config.context / 2, kCheckpointProbeHalfLength),
                           config.vocab, 1);
  }
  const std::size_t half = std::min(config.context / 2, kProbeMaxHalfLength);
  return induction_probe(kProbeSeed, half, config.vocab, kProbeBatch);
}

Batch probe_batch(std::vector<std::int32_t> ids, std::vector<std::int32_t> targets,
                  std::size_t batch, std::size_t n) {
  if (batch == 0 || n == 0) {
    throw Error("a probe needs batch >= 1 and n >= 1, got batch " + std::to_string(batch) +
                " and n " + std::to_string(n));
  }
  if (ids.size() != batch * n) {
    throw Error("the probe's ids have " + std::to_string(ids.size()) +
                " tokens, expected batch * n = " + std::to_string(batch * n));
  }
  if (targets.empty()) {
    targets.assign(ids.size(), -1);
    for (std::size_t b = 0; b < batch; ++b) {
      for (std::size_t i = 0; i + 1 < n; ++i) targets[b * n + i] = ids[b * n + i + 1];
    }
  } else if (targets.size() != ids.size()) {
    throw Error("the probe's targets have " + std::to_string(targets.size()) +
                " values, expected batch * n = " + std::to_string(ids.size()));
  }
  Batch probe;
  probe.batch = batch;
  probe.n = n;
  probe.ids = std::move(ids);
  probe.targets = std::move(targets);
  return probe;
}

}  // namespace attn
