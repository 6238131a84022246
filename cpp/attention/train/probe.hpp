// Probe batches for a model's head diagnostics: the default induction probe sized to the model,
// or the caller's own sequences with next-token targets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attention/model/model.hpp"
#include "attention/train/batch.hpp"

namespace attn {

inline constexpr std::uint32_t kProbeSeed = 2022;       // Olsson et al.'s year: any fixed seed
inline constexpr std::size_t kProbeMaxHalfLength = 32;  // 64-token sequences at most
inline constexpr std::size_t kProbeBatch = 16;

// A loaded checkpoint's (GPT-2 small costs ~0.7 s per 64-token forward in a tab): one sequence.
inline constexpr std::size_t kCheckpointProbeHalfLength = 25;

// induction_probe(kProbeSeed, min(context / 2, kProbeMaxHalfLength), vocab, kProbeBatch): random
// tokens of the model's whole vocabulary then their repeat, targets inside the repeat; for a
// checkpoint (config.checkpoint) one sequence of half min(context / 2, 25). Throws attn::Error
// for a context below 4 (no room for a repeat of 2 tokens).
Batch model_probe(const ModelConfig& config);

// The caller's probe: ids [batch·n]; targets [batch·n] (< 0 not scored), or empty for the
// next token: position i targets ids[i + 1], the last position of each sequence not scored.
// Throws attn::Error when the sizes disagree or batch or n is 0 (token ids are checked by the
// model).
Batch probe_batch(std::vector<std::int32_t> ids, std::vector<std::int32_t> targets,
                  std::size_t batch, std::size_t n);

}  // namespace attn
