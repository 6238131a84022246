// The training tasks: sequence generators, held-out sets, encode/decode and accuracy.
#include "attention/train/tasks.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

#include "attention/error.hpp"
#include "attention/text/alphabet.hpp"
#include "attention/train/english_text.hpp"

namespace attn {
namespace {

constexpr std::string_view kLetters = "abcdefghijklmnopqrstuvwxyz";
constexpr std::string_view kMixedLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
constexpr std::string_view kSequenceVocabulary = "abcdefghijklmnopqrstuvwxyz|.";
constexpr std::string_view kEnglishVocabulary = " abcdefghijklmnopqrstuvwxyz0123456789.,;:!?'\"-()";
constexpr std::int32_t kSeparator = 26;  // '|' in kSequenceVocabulary
constexpr std::int32_t kEnd = 27;        // '.'
constexpr std::uint32_t kHeldOutSeedMix = 0x5bd1e995U;
constexpr int kHeldOutClassBits = 3;  // 1 in 2^3 synthetic sequences is held out
constexpr int kMaxDraws = 100000;     // rejection sampling gives up after this many

std::string vocabulary_of(TaskKind kind) {
  switch (kind) {
    case TaskKind::Induction:
      return std::string(kMixedLetters);
    case TaskKind::English:
      return std::string(kEnglishVocabulary);
    default:
      return std::string(kSequenceVocabulary);
  }
}

// Smallest context that leaves a scored target, and what it holds.
std::pair<std::size_t, std::string_view> minimum_context(TaskKind kind) {
  switch (kind) {
    case TaskKind::Induction:
      return {4, "two tokens and their repeat"};
    case TaskKind::English:
      return {1, "one character"};
    default:
      return {3, "a letter, the separator and the answer"};
  }
}

std::string task_label(TaskKind kind) {
  return "the " + std::string(task_kind_name(kind)) + " task";
}

// Which of 2^kHeldOutClassBits classes a sequence falls in (class 0 is held out): the top
// bits of a 64-bit multiplicative (Fibonacci) hash of its ids, which depend on every id.
std::uint32_t held_out_class(std::span<const std::int32_t> ids) {
  std::uint64_t h = 0;
  for (const std::int32_t id : ids) {
    h = (h ^ static_cast<std::uint32_t>(id)) * 0x9E3779B97F4A7C15ULL + 1;
  }
  return static_cast<std::uint32_t>(h >> (64 - kHeldOutClassBits));
}

}  // namespace

std::span<const NamedKind<TaskKind>> task_kinds() {
  static constexpr NamedKind<TaskKind> table[] = {{"induction", TaskKind::Induction},
                                                  {"copy", TaskKind::Copy},
                                                  {"reverse", TaskKind::Reverse},
                                                  {"sort", TaskKind::Sort},
                                                  {"english", TaskKind::English}};
  return table;
}

TaskKind parse_task_kind(std::string_view name) {
  return parse_named(task_kinds(), name, "task");
}

std::string_view task_kind_name(TaskKind kind) {
  return name_of(task_kinds(), kind);
}

std::size_t uniform_index(NumpyRandomState& rng, std::size_t count) {
  if (count <= 1) return 0;
  const auto max = static_cast<std::uint32_t>(count - 1);
  std::uint32_t mask = max;
  for (int shift = 1; shift < 32; shift <<= 1) mask |= mask >> shift;
  for (;;) {
    const std::uint32_t v = rng.next_u32() & mask;
    if (v <= max) return v;
  }
}

void fill_repeated_random(NumpyRandomState& rng, std::size_t vocab, std::size_t half,
                          std::span<std::int32_t> row) {
  if (half <= vocab) {
    // A partial Fisher-Yates shuffle of [0, vocab): half distinct tokens.
    std::vector<std::int32_t> pool(vocab);
    for (std::size_t t = 0; t < vocab; ++t) pool[t] = static_cast<std::int32_t>(t);
    for (std::size_t i = 0; i < half && i < row.size(); ++i) {
      std::swap(pool[i], pool[i + uniform_index(rng, vocab - i)]);
      row[i] = pool[i];
    }
  } else {
    for (std::size_t i = 0; i < half && i < row.size(); ++i) {
      row[i] = static_cast<std::int32_t>(uniform_index(rng, vocab));
    }
  }
  for (std::size_t i = half; i < row.size(); ++i) row[i] = row[i - half];
}

Task::Task(TaskKind kind, std::size_t context, std::uint32_t seed, std::size_t held_out)
    : kind_(kind), context_(context), vocabulary_(vocabulary_of(kind)), rng_(seed) {
  const auto [min_context, what] = minimum_context(kind);
  if (context < min_context) {
    throw Error(task_label(kind) + " needs a context of at least " + std::to_string(min_context) +
                " (" + std::string(what) + "), got " + std::to_string(context));
  }
  if (context > kMaxContext) {
    throw Error("a task's context is at most " + std::to_string(kMaxContext) + ", got " +
                std::to_string(context));
  }
  if (held_out < 1 || held_out > kMaxBatch) {
    throw Error("the held-out set has 1 to " + std::to_string(kMaxBatch) + " sequences, got " +
                std::to_string(held_out));
  }
  if (held_out * context > kMaxTokens) {
    throw Error("the held-out set would hold " + std::to_string(held_out * context) +
                " tokens, more than " + std::to_string(kMaxTokens));
  }

  held_out_.batch = held_out;
  held_out_.n = context;
  held_out_.ids.assign(held_out * context, 0);
  held_out_.targets.assign(held_out * context, -1);
  if (kind == TaskKind::English) {
    text_ = encode(english_text());
    const std::size_t train_end = text_.size() / 8 * 7;
    const std::size_t held_len = text_.size() - train_end;
    // A window needs context + 1 characters (its last target is the character after it).
    const std::size_t last_start = held_len - (context + 1);  // >= 0: context <= kMaxContext
    for (std::size_t k = 0; k < held_out; ++k) {
      const std::size_t offset = held_out == 1 ? 0 : k * last_start / (held_out - 1);
      fill_window(train_end + offset, std::span(held_out_.ids).subspan(k * context, context),
                  std::span(held_out_.targets).subspan(k * context, context));
    }
  } else {
    NumpyRandomState held_rng(seed ^ kHeldOutSeedMix);
    for (std::size_t k = 0; k < held_out; ++k) {
      fill_synthetic(held_rng, true, std::span(held_out_.ids).subspan(k * context, context),
                     std::span(held_out_.targets).subspan(k * context, context));
    }
  }
}

void Task::fill_window(std::size_t start, std::span<std::int32_t> ids,
                       std::span<std::int32_t> targets) const {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ids[i] = text_[start + i];
    targets[i] = text_[start + i + 1];
  }
}

void Task::fill_synthetic(NumpyRandomState& rng, bool held_out, std::span<std::int32_t> ids,
                          std::span<std::int32_t> targets) const {
  const std::size_t n = ids.size();
  for (int draw = 0; draw < kMaxDraws; ++draw) {
    std::fill(targets.begin(), targets.end(), -1);
    if (kind_ == TaskKind::Induction) {
      // The period varies from sequence to sequence (n/4 … n/2 tokens, at least 2), so the
      // repeat is found by content, as an induction head does, not at a fixed offset that
      // positions alone would give away.
      const std::size_t longest = (n + 1) / 2, shortest = std::max<std::size_t>(2, (n + 3) / 4);
      const std::size_t half = shortest + uniform_index(rng, longest - shortest + 1);
      fill_repeated_random(rng, vocabulary_.size(), half, ids);
      for (std::size_t i = half; i + 1 < n; ++i) targets[i] = ids[i + 1];
    } else {
      // [letters] | [answer] . . . ; L letters, L <= (n - 1) / 2.
      const std::size_t length = 1 + uniform_index(rng, (n - 1) / 2);
      for (std::size_t i = 0; i < length; ++i) {
        ids[i] = static_cast<std::int32_t>(uniform_index(rng, kLetters.size()));
      }
      std::vector<std::int32_t> answer(ids.begin(),
                                       ids.begin() + static_cast<std::ptrdiff_t>(length));
      if (kind_ == TaskKind::Reverse) std::reverse(answer.begin(), answer.end());
      if (kind_ == TaskKind::Sort) std::sort(answer.begin(), answer.end());
      ids[length] = kSeparator;
      for (std::size_t i = 0; i < length; ++i) ids[length + 1 + i] = answer[i];
      for (std::size_t i = 2 * length + 1; i < n; ++i) ids[i] = kEnd;
      // Position length + i (the separator, then each answer letter) targets what follows.
      for (std::size_t i = 0; i < length; ++i) targets[length + i] = answer[i];
      targets[2 * length] = kEnd;
    }
    if ((held_out_class(ids) == 0) == held_out) return;
  }
  throw Error(task_label(kind_) + " with a context of " + std::to_string(n) +
              " has too few distinct sequences to hold some out; use a longer context");
}

Batch Task::sample(std::size_t batch) {
  if (batch < 1 || batch > kMaxBatch) {
    throw Error("a batch has 1 to " + std::to_string(kMaxBatch) + " sequences, got " +
                std::to_string(batch));
  }
  if (batch * context_ > kMaxTokens) {
    throw Error("a batch of " + std::to_string(batch) + " sequences of " +
                std::to_string(context_) + " tokens exceeds " + std::to_string(kMaxTokens) +
                " tokens");
  }
  Batch out;
  out.batch = batch;
  out.n = context_;
  out.ids.assign(batch * context_, 0);
  out.targets.assign(batch * context_, -1);
  for (std::size_t b = 0; b < batch; ++b) {
    const auto ids = std::span(out.ids).subspan(b * context_, context_);
    const auto targets = std::span(out.targets).subspan(b * context_, context_);
    if (kind_ == TaskKind::English) {
      const std::size_t train_end = text_.size() / 8 * 7;
      fill_window(uniform_index(rng_, train_end - context_), ids, targets);
    } else {
      fill_synthetic(rng_, false, ids, targets);
    }
  }
  return out;
}

std::vector<std::int32_t> Task::encode(std::string_view text) const {
  return read_in_alphabet(text, vocabulary_, task_label(kind_), UnknownCharacters::Error).ids;
}

std::string Task::decode(std::span<const std::int32_t> ids) const {
  std::string text;
  text.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || static_cast<std::size_t>(ids[i]) >= vocabulary_.size()) {
      throw Error("id " + std::to_string(ids[i]) + " (at " + std::to_string(i) + ") is outside " +
                  task_label(kind_) + "'s vocabulary of " + std::to_string(vocabulary_.size()) +
                  " characters (ids 0 to " + std::to_string(vocabulary_.size() - 1) + ")");
    }
    text.push_back(vocabulary_[static_cast<std::size_t>(ids[i])]);
  }
  return text;
}

double accuracy(std::span<const float> logits, const Batch& batch, std::size_t vocab) {
  const std::size_t rows = batch.batch * batch.n;
  if (batch.ids.size() != rows || batch.targets.size() != rows) {
    throw Error("the batch has " + std::to_string(batch.ids.size()) + " ids and " +
                std::to_string(batch.targets.size()) +
                " targets, expected batch * n = " + std::to_string(rows));
  }
  if (vocab < 1 || logits.size() != rows * vocab) {
    throw Error("logits have " + std::to_string(logits.size()) +
                " values, expected batch * n * vocab = " + std::to_string(batch.batch) + " * " +
                std::to_string(batch.n) + " * " + std::to_string(vocab) + " = " +
                std::to_string(rows * vocab));
  }
  std::size_t counted = 0;
  std::size_t correct = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::int32_t target = batch.targets[r];
    if (target < 0) continue;
    if (static_cast<std::size_t>(target) >= vocab) {
      throw Error("target " + std::to_string(target) + " (at " + std::to_string(r) +
                  ") is outside the vocabulary of " + std::to_string(vocab));
    }
    const float* row = logits.data() + r * vocab;
    std::size_t best = vocab;  // none yet: NaN never wins
    for (std::size_t j = 0; j < vocab; ++j) {
      if (!std::isnan(row[j]) && (best == vocab || row[j] > row[best])) best = j;
    }
    ++counted;
    if (best == static_cast<std::size_t>(target)) ++correct;
  }
  if (counted == 0) throw Error("the batch has no target to score (every target is < 0)");
  return static_cast<double>(correct) / static_cast<double>(counted);
}

}  // namespace attn
