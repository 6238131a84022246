// Head diagnostics: how much of a head's attention goes to the previous token, to the token
// after an earlier copy of the current one (induction), to earlier copies, and to position 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "attention/train/batch.hpp"

namespace attn {

// One head's scores, each a mean of attention weights A[i, j] (query i, key j) over the
// probe's sequences and the queries named below. A score with no query to average over (e.g.
// same-token on a probe without a repeated token) is NaN: not measured by this probe.
//   previous_token  A[i, i-1], over queries i >= 1.
//   induction       The prefix-matching score of Olsson et al. 2022, "In-context Learning and
//                   Induction Heads" (transformer-circuits.pub): the attention a query pays to
//                   the token that followed an earlier occurrence of its own token. For query i
//                   let S(i) = { j + 1 : j + 1 < i and ids[j] = ids[i] } (one past each earlier
//                   occurrence, itself strictly before i); the query's score is
//                   sum_{s in S(i)} A[i, s], the whole mass on those successors, and the head's
//                   score is its mean over queries with S(i) non-empty. A token that occurs
//                   several times earlier counts all its successors (a perfect induction head
//                   may split its attention among them and still score 1). induction_probe
//                   makes each S(i) a single position by drawing distinct tokens when it can.
//   same_token      sum_{j < i, ids[j] = ids[i]} A[i, j], over queries with such a j.
//   first_token     A[i, 0], over queries i >= 1 (query 0 can only attend to itself).
struct HeadScores {
  double previous_token = 0.0;
  double induction = 0.0;
  double same_token = 0.0;
  double first_token = 0.0;
};

// weights [batch, heads, n, n]: one layer's attention weights on the probe (causal: row i
// sums to 1 over j <= i, as the model's layers give them); probe.ids [batch, n] (the targets
// are not used here). Returns one HeadScores per head. Throws attn::Error on sizes that
// disagree, heads == 0 or n < 2.
std::vector<HeadScores> head_scores(std::span<const float> weights, std::size_t heads,
                                    const Batch& probe);

// The standard induction probe: batch sequences of n = 2 · half_length tokens, each
// half_length random tokens in [0, vocab) (distinct when vocab >= half_length) followed by
// their repeat; targets as the induction task's: position i in [half_length, n - 1) targets
// ids[i + 1]. Deterministic in seed. The same Batch serves head_scores and, with its targets,
// a loss for head ablation. Throws for half_length < 2, vocab outside [2, 65536], or more
// than Task::kMaxTokens tokens.
Batch induction_probe(std::uint32_t seed, std::size_t half_length, std::size_t vocab,
                      std::size_t batch = 1);

}  // namespace attn
