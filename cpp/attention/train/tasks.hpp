// Training tasks generated from a seed (induction, copy, reverse, sort, English text), their
// character vocabularies, fixed held-out sets, and the accuracy of a model's logits on them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attention/name_table.hpp"
#include "attention/rng.hpp"
#include "attention/train/batch.hpp"

namespace attn {

// Every task's tokens are readable characters, so a person can type a probe: token id = the
// character's index in the task's vocabulary. Sequences have exactly n = context tokens.
//   Induction  vocabulary a-z A-Z. half random tokens, half uniform in [max(2, ceil(n/4)),
//              ceil(n/2)] per sequence (so the repeat must be found by content: at a fixed
//              offset, learned positions alone would solve the task and no induction head
//              would form), distinct while half <= 52 (drawn with replacement beyond), then
//              repeated to the end:
//              ids[i] = ids[i - half] for i >= half. Targets only inside the repeat, where the
//              next token is predictable from the first half: position i in [half, n-1) targets
//              ids[i+1]: in "abcdabcd", positions 4, 5, 6 (a, b, c) target b, c, d.
//   Copy       vocabulary a-z | . : L random letters (L uniform in [1, (n-1)/2]), '|', the
//              letters again, then '.' padding to n ("abc|abc...."). Targets: from the '|' on,
//              each position targets the next output letter, and the last output letter targets
//              '.' (the end); the letters before '|' and the padding are not scored.
//   Reverse    as Copy, the output reversed ("abc|cba").
//   Sort       as Copy, the output sorted by id, i.e. alphabetically ("cab|abc").
//   English    vocabulary " a-z0-9.,;:!?'"-()": next-character prediction on english_text(); a
//              sequence is a window of n characters, every position targets the character after
//              it. A training window (with the character after it) lies anywhere in the first
//              7/8 of the text.
//
// Held-out sets (held_out sequences, fixed for a seed) are disjoint from every training batch
// by construction: English held-out windows lie in the last 1/8 of the text, evenly spaced; a
// synthetic sequence is held out exactly when the top 3 bits of a hash of its ids are 0, and
// training draws reject those (held-out draws the others), so about 1 in 8 possible sequences
// is never trained on. Training and held-out sequences come from two NumpyRandomState
// streams: seed, and seed ^ 0x5bd1e995.
enum class TaskKind { Induction, Copy, Reverse, Sort, English };

// "induction" | "copy" | "reverse" | "sort" | "english"; anything else throws, listing them.
std::span<const NamedKind<TaskKind>> task_kinds();
TaskKind parse_task_kind(std::string_view name);
std::string_view task_kind_name(TaskKind kind);

class Task {
 public:
  static constexpr std::size_t kMaxContext = 4096;
  static constexpr std::size_t kMaxBatch = 65536;
  static constexpr std::size_t kMaxTokens = std::size_t{1} << 24;  // batch · n per batch
  static constexpr std::size_t kDefaultHeldOut = 256;

  // Throws attn::Error for a context too short for the kind (induction >= 4, copy, reverse
  // and sort >= 3, english >= 1) or above kMaxContext, and held_out outside [1, kMaxBatch].
  Task(TaskKind kind, std::size_t context, std::uint32_t seed,
       std::size_t held_out = kDefaultHeldOut);

  TaskKind kind() const { return kind_; }
  std::size_t context() const { return context_; }
  const std::string& vocabulary() const { return vocabulary_; }  // characters; id = index

  // The next training batch [batch, context]; advances the task's generator. Same seed, same
  // sequence of calls -> the same batches.
  Batch sample(std::size_t batch);
  const Batch& held_out() const { return held_out_; }

  // Characters -> ids (read_in_alphabet, strictly): throws naming the first character not in
  // the vocabulary (or invalid UTF-8). decode throws naming the first id outside
  // [0, vocabulary size).
  std::vector<std::int32_t> encode(std::string_view text) const;
  std::string decode(std::span<const std::int32_t> ids) const;

 private:
  TaskKind kind_;
  std::size_t context_;
  std::string vocabulary_;
  NumpyRandomState rng_;
  Batch held_out_;
  std::vector<std::int32_t> text_;  // English only: english_text() encoded

  void fill_synthetic(NumpyRandomState& rng, bool held_out, std::span<std::int32_t> ids,
                      std::span<std::int32_t> targets) const;
  void fill_window(std::size_t start, std::span<std::int32_t> ids,
                   std::span<std::int32_t> targets) const;
};

// Fraction of the scored targets (>= 0) whose logits' argmax equals the target (the first
// largest on ties; a NaN logit never wins, so a row of NaN counts as wrong).
// logits [batch, n, vocab]. Throws on sizes that disagree, a target >= vocab, or a batch with
// no scored target.
double accuracy(std::span<const float> logits, const Batch& batch, std::size_t vocab);

// Uniform integer in [0, count) from rng (masked rejection sampling: no modulo bias).
std::size_t uniform_index(NumpyRandomState& rng, std::size_t count);

// row[0, half) = random tokens in [0, vocab), distinct while half <= vocab (else with
// replacement); row[i] = row[i - half] for i >= half. Used by the induction task and probe.
void fill_repeated_random(NumpyRandomState& rng, std::size_t vocab, std::size_t half,
                          std::span<std::int32_t> row);

}  // namespace attn
