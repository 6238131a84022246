// Tests for the training tasks: their sequences, determinism, held-out sets, vocabularies and
// accuracy.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/train/english_text.hpp"
#include "attention/train/tasks.hpp"

using attn::Batch;
using attn::Task;
using attn::TaskKind;
using Catch::Matchers::ContainsSubstring;

namespace {

using Ids = std::vector<std::int32_t>;

Ids row_of(const std::vector<std::int32_t>& v, std::size_t n, std::size_t b) {
  return Ids(v.begin() + static_cast<std::ptrdiff_t>(b * n),
             v.begin() + static_cast<std::ptrdiff_t>((b + 1) * n));
}

std::set<Ids> rows_of(const Batch& batch) {
  std::set<Ids> rows;
  for (std::size_t b = 0; b < batch.batch; ++b) rows.insert(row_of(batch.ids, batch.n, b));
  return rows;
}

// Checks one copy / reverse / sort sequence from its text, e.g. "cab|abc..", with targets.
void check_sequence_task(TaskKind kind, const Task& task, const Ids& ids, const Ids& targets) {
  const std::string text = task.decode(ids);
  const std::size_t bar = text.find('|');
  REQUIRE(bar != std::string::npos);
  REQUIRE(bar >= 1);
  const std::size_t n = text.size();
  REQUIRE(2 * bar + 1 <= n);
  const std::string letters = text.substr(0, bar);
  std::string expected = letters;
  if (kind == TaskKind::Reverse) std::reverse(expected.begin(), expected.end());
  if (kind == TaskKind::Sort) std::sort(expected.begin(), expected.end());
  CHECK(letters.find_first_not_of("abcdefghijklmnopqrstuvwxyz") == std::string::npos);
  CHECK(text.substr(bar + 1, bar) == expected);
  CHECK(text.substr(2 * bar + 1) == std::string(n - 2 * bar - 1, '.'));
  // Scored: the separator and every answer letter, each targeting the next answer character
  // (the last one the end '.').
  const std::string answer_then_end = expected + ".";
  for (std::size_t i = 0; i < n; ++i) {
    if (i >= bar && i <= 2 * bar) {
      REQUIRE(targets[i] >= 0);
      CHECK(task.vocabulary()[static_cast<std::size_t>(targets[i])] == answer_then_end[i - bar]);
    } else {
      CHECK(targets[i] == -1);
    }
  }
}

}  // namespace

TEST_CASE("task names parse, and an unknown one lists them", "[tasks]") {
  for (const char* name : {"induction", "copy", "reverse", "sort", "english"}) {
    CHECK(attn::task_kind_name(attn::parse_task_kind(name)) == name);
  }
  CHECK_THROWS_WITH(attn::parse_task_kind("Copy"),
                    ContainsSubstring("unknown task 'Copy'") &&
                        ContainsSubstring("'induction', 'copy', 'reverse', 'sort' or 'english'"));
  CHECK_THROWS_AS(attn::parse_task_kind(""), attn::Error);
}

TEST_CASE("same seed, same batches; another seed, other batches", "[tasks]") {
  for (const TaskKind kind : {TaskKind::Induction, TaskKind::Copy, TaskKind::Reverse,
                              TaskKind::Sort, TaskKind::English}) {
    Task a(kind, 24, 7, 16);
    Task b(kind, 24, 7, 16);
    Task c(kind, 24, 8, 16);
    CHECK(a.held_out().ids == b.held_out().ids);
    CHECK(a.held_out().targets == b.held_out().targets);
    for (int step = 0; step < 3; ++step) {
      const Batch x = a.sample(5);
      const Batch y = b.sample(5);
      const Batch z = c.sample(5);
      CHECK(x.ids == y.ids);
      CHECK(x.targets == y.targets);
      CHECK(x.ids != z.ids);
    }
    // Successive batches differ (the generator advances).
    CHECK(a.sample(5).ids != a.sample(5).ids);
  }
}

TEST_CASE("batches have the requested shape", "[tasks]") {
  Task task(TaskKind::Copy, 9, 1, 3);
  const Batch batch = task.sample(4);
  CHECK(batch.batch == 4);
  CHECK(batch.n == 9);
  CHECK(batch.ids.size() == 36);
  CHECK(batch.targets.size() == 36);
  CHECK(task.held_out().batch == 3);
  CHECK(task.held_out().n == 9);
  CHECK(task.held_out().ids.size() == 27);
}

TEST_CASE("induction: distinct random letters, then their repeat, scored on the repeat",
          "[tasks]") {
  for (const std::size_t n : {4u, 9u, 64u, 150u}) {
    Task task(TaskKind::Induction, n, 3);
    CHECK(task.vocabulary() == "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
    // The period varies from n/4 to n/2 tokens (at least 2), so it cannot be read off positions.
    const std::size_t longest = (n + 1) / 2, shortest = std::max<std::size_t>(2, (n + 3) / 4);
    const Batch batch = task.sample(32);
    std::set<std::size_t> periods;
    for (std::size_t b = 0; b < batch.batch; ++b) {
      const Ids ids = row_of(batch.ids, n, b);
      const Ids targets = row_of(batch.targets, n, b);
      // The period: the shortest in [shortest, longest] that the whole row repeats with.
      auto repeats_with = [&](std::size_t p) {
        for (std::size_t i = p; i < n; ++i) {
          if (ids[i] != ids[i - p]) return false;
        }
        return true;
      };
      std::size_t half = shortest;
      while (half <= longest && !repeats_with(half)) ++half;
      REQUIRE(half <= longest);
      periods.insert(half);
      const std::set<std::int32_t> first(ids.begin(),
                                         ids.begin() + static_cast<std::ptrdiff_t>(half));
      if (half <= 52) CHECK(first.size() == half);  // distinct while the letters last
      for (std::size_t i = 0; i < n; ++i) {
        CHECK(ids[i] >= 0);
        CHECK(ids[i] < 52);
        if (i >= half) CHECK(ids[i] == ids[i - half]);
        CHECK(targets[i] == (i >= half && i + 1 < n ? ids[i + 1] : -1));
      }
    }
    if (longest > shortest && longest <= 52) CHECK(periods.size() > 1);
  }
  // "abcdabcd" read as the task defines it: some letters, then the same letters again.
  Task task(TaskKind::Induction, 8, 3);
  const Batch batch = task.sample(1);
  const std::string text = task.decode(batch.ids);
  const std::size_t period = text.find(text[0], 1);
  REQUIRE(period != std::string::npos);
  CHECK(text.substr(period) == text.substr(0, text.size() - period));
}

TEST_CASE("copy, reverse and sort: letters, separator, the answer, then end padding", "[tasks]") {
  for (const TaskKind kind : {TaskKind::Copy, TaskKind::Reverse, TaskKind::Sort}) {
    for (const std::size_t n : {5u, 8u, 33u}) {
      Task task(kind, n, 11);
      CHECK(task.vocabulary() == "abcdefghijklmnopqrstuvwxyz|.");
      const Batch batch = task.sample(40);
      std::set<std::size_t> lengths;
      for (std::size_t b = 0; b < batch.batch; ++b) {
        const Ids ids = row_of(batch.ids, n, b);
        check_sequence_task(kind, task, ids, row_of(batch.targets, n, b));
        lengths.insert(task.decode(ids).find('|'));
      }
      CHECK(*lengths.rbegin() <= (n - 1) / 2);
      if (n > 5) CHECK(lengths.size() > 1);  // lengths vary
      const Batch& held = task.held_out();
      for (std::size_t b = 0; b < held.batch; ++b) {
        check_sequence_task(kind, task, row_of(held.ids, n, b), row_of(held.targets, n, b));
      }
    }
  }
  Task sort(TaskKind::Sort, 7, 1);
  const Ids ids = sort.encode("cab|abc");
  CHECK(sort.decode(ids) == "cab|abc");
}

TEST_CASE("held-out sequences never appear in training batches", "[tasks]") {
  for (const TaskKind kind :
       {TaskKind::Induction, TaskKind::Copy, TaskKind::Reverse, TaskKind::Sort}) {
    // Short contexts, where a training draw would often hit a held-out sequence by chance.
    for (const std::size_t n : {4u, 6u}) {
      Task task(kind, n, 5, 64);
      const std::set<Ids> held = rows_of(task.held_out());
      REQUIRE(!held.empty());
      for (int step = 0; step < 50; ++step) {
        const Batch batch = task.sample(64);
        for (std::size_t b = 0; b < batch.batch; ++b) {
          REQUIRE(held.count(row_of(batch.ids, n, b)) == 0);
        }
      }
    }
  }
}

TEST_CASE("the held-out set is fixed: sampling does not change it", "[tasks]") {
  Task task(TaskKind::Reverse, 12, 2, 20);
  const Batch before = task.held_out();
  for (int step = 0; step < 4; ++step) task.sample(16);
  CHECK(task.held_out().ids == before.ids);
  CHECK(task.held_out().targets == before.targets);
}

TEST_CASE("even the shortest context holds some sequences out", "[tasks]") {
  // Copy with n = 3 has 26 possible sequences, "a|a" to "z|z"; about 1 in 8 is held out and
  // training draws only the others, so together they still cover all 26.
  for (const TaskKind kind : {TaskKind::Copy, TaskKind::Reverse, TaskKind::Sort}) {
    Task task(kind, 3, 1, 16);
    const std::set<Ids> held = rows_of(task.held_out());
    std::set<Ids> trained;
    for (int step = 0; step < 20; ++step) {
      for (const Ids& row : rows_of(task.sample(32))) trained.insert(row);
    }
    CHECK(!held.empty());
    CHECK(held.size() < 26);
    for (const Ids& row : held) CHECK(trained.count(row) == 0);
    CHECK(held.size() + trained.size() == 26);
  }
}

TEST_CASE("english: the public-domain text fits the vocabulary", "[tasks]") {
  const std::string_view text = attn::english_text();
  CHECK(text.size() > 32 * 1024);
  CHECK(text.size() <= 200 * 1024);
  CHECK(text.substr(0, 10) == "abasement,");
  Task task(TaskKind::English, 16, 1);
  CHECK(task.vocabulary() == " abcdefghijklmnopqrstuvwxyz0123456789.,;:!?'\"-()");
  const Ids ids = task.encode(text);  // throws on a character outside the vocabulary
  CHECK(task.decode(ids) == text);
}

TEST_CASE("english: windows of the text, training from the first 7/8, held out from the rest",
          "[tasks]") {
  const std::string text(attn::english_text());
  const std::size_t train_end = text.size() / 8 * 7;
  const std::size_t n = 32;
  Task task(TaskKind::English, n, 9, 50);
  const auto check_windows = [&](const Batch& batch, bool held_out) {
    for (std::size_t b = 0; b < batch.batch; ++b) {
      const Ids ids = row_of(batch.ids, n, b);
      const Ids targets = row_of(batch.targets, n, b);
      for (std::size_t i = 0; i + 1 < n; ++i) CHECK(targets[i] == ids[i + 1]);
      // The window with the character after it.
      const std::string window = task.decode(ids) + task.decode(Ids{targets[n - 1]});
      if (held_out) {
        const std::size_t at = text.rfind(window);
        REQUIRE(at != std::string::npos);
        CHECK(at >= train_end);
      } else {
        const std::size_t at = text.find(window);
        REQUIRE(at != std::string::npos);
        CHECK(at + n + 1 <= train_end);
      }
    }
  };
  check_windows(task.held_out(), true);
  for (int step = 0; step < 5; ++step) check_windows(task.sample(20), false);
  // Held-out windows are spread over the held-out part: the first starts it, the last ends it.
  const Batch& held = task.held_out();
  CHECK(task.decode(row_of(held.ids, n, 0)) == text.substr(train_end, n));
  CHECK(task.decode(row_of(held.ids, n, held.batch - 1)) == text.substr(text.size() - n - 1, n));
}

TEST_CASE("encode and decode round trip; bad characters and ids are named", "[tasks]") {
  Task copy(TaskKind::Copy, 8, 1);
  CHECK(copy.encode("abc|abc.") == Ids{0, 1, 2, 26, 0, 1, 2, 27});
  CHECK(copy.encode("").empty());
  CHECK(copy.decode(Ids{25, 26, 27}) == "z|.");
  CHECK_THROWS_WITH(copy.encode("abC"), ContainsSubstring("character \"C\" at position 2 is not "
                                                          "in the copy task's alphabet") &&
                                            ContainsSubstring("abcdefghijklmnopqrstuvwxyz|."));
  CHECK_THROWS_WITH(copy.encode("a\xC3\xA9"), ContainsSubstring("U+00E9 at position 1"));
  CHECK_THROWS_WITH(copy.encode("a\n"), ContainsSubstring("character U+000A at position 1"));
  CHECK_THROWS_WITH(copy.encode("ab\xFF"), ContainsSubstring("invalid UTF-8 at byte 2"));
  CHECK_THROWS_WITH(copy.decode(Ids{0, 28}),
                    ContainsSubstring("id 28 (at 1) is outside the copy task's vocabulary of 28 "
                                      "characters (ids 0 to 27)"));
  CHECK_THROWS_AS(copy.decode(Ids{-1}), attn::Error);
  Task english(TaskKind::English, 8, 1);
  CHECK(english.decode(english.encode("hello, world! (1911)")) == "hello, world! (1911)");
  CHECK_THROWS_WITH(english.encode("Hello"), ContainsSubstring("character \"H\" at position 0"));
}

TEST_CASE("bad task options are clear errors", "[tasks]") {
  CHECK_THROWS_WITH(Task(TaskKind::Induction, 3, 1),
                    ContainsSubstring("the induction task needs a context of at least 4") &&
                        ContainsSubstring("got 3"));
  CHECK_THROWS_WITH(Task(TaskKind::Copy, 2, 1),
                    ContainsSubstring("the copy task needs a context of at least 3"));
  CHECK_THROWS_WITH(Task(TaskKind::Sort, 0, 1), ContainsSubstring("at least 3"));
  CHECK_THROWS_WITH(Task(TaskKind::English, 0, 1),
                    ContainsSubstring("the english task needs a context of at least 1"));
  CHECK_THROWS_WITH(Task(TaskKind::English, 4097, 1),
                    ContainsSubstring("context is at most 4096, got 4097"));
  CHECK_THROWS_WITH(Task(TaskKind::Copy, 8, 1, 0),
                    ContainsSubstring("held-out set has 1 to 65536 sequences, got 0"));
  CHECK_THROWS_WITH(Task(TaskKind::Copy, 4096, 1, 65536), ContainsSubstring("tokens, more than"));
  Task task(TaskKind::Copy, 8, 1);
  CHECK_THROWS_WITH(task.sample(0), ContainsSubstring("a batch has 1 to 65536 sequences, got 0"));
  Task wide(TaskKind::English, 4096, 1, 1);
  CHECK_THROWS_WITH(wide.sample(8192), ContainsSubstring("exceeds"));
  CHECK(wide.sample(1).ids.size() == 4096);  // the task keeps working after an error
}

TEST_CASE("accuracy: argmax of the logits against the scored targets", "[tasks]") {
  Batch batch;
  batch.batch = 1;
  batch.n = 4;
  batch.ids = {0, 1, 2, 0};
  batch.targets = {2, -1, 0, 1};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // vocab 3, rows: argmax 2 (right), ignored, tie 0/1 -> 0 (right), NaN row (wrong).
  std::vector<float> logits = {0.f, 1.f, 5.f, 9.f, 9.f, 9.f, 3.f, 3.f, -1.f, nan, nan, nan};
  CHECK(attn::accuracy(logits, batch, 3) == 2.0 / 3.0);
  logits[9] = 0.f;  // {0, 1, NaN}: the NaN never wins, argmax 1 (right)
  logits[10] = 1.f;
  CHECK(attn::accuracy(logits, batch, 3) == 1.0);
  logits[0] = 7.f;  // row 0 now argmax 0, target 2: wrong
  CHECK(attn::accuracy(logits, batch, 3) == 2.0 / 3.0);

  CHECK_THROWS_WITH(attn::accuracy(std::vector<float>(11), batch, 3),
                    ContainsSubstring("logits have 11 values, expected batch * n * vocab = 1 * 4 "
                                      "* 3 = 12"));
  CHECK_THROWS_AS(attn::accuracy(logits, batch, 0), attn::Error);
  Batch wrong_target = batch;
  wrong_target.targets[3] = 3;
  CHECK_THROWS_WITH(attn::accuracy(logits, wrong_target, 3),
                    ContainsSubstring("target 3 (at 3) is outside the vocabulary of 3"));
  Batch none = batch;
  none.targets = {-1, -1, -1, -1};
  CHECK_THROWS_WITH(attn::accuracy(logits, none, 3), ContainsSubstring("no target to score"));
  Batch short_ids = batch;
  short_ids.ids.pop_back();
  CHECK_THROWS_WITH(attn::accuracy(logits, short_ids, 3), ContainsSubstring("3 ids and 4 targets"));
}

TEST_CASE("accuracy of the held-out set's own answers is 1", "[tasks]") {
  // Logits that put 1 on each target (and on token 0 where nothing is scored).
  Task task(TaskKind::Sort, 10, 4, 32);
  const Batch& held = task.held_out();
  const std::size_t vocab = task.vocabulary().size();
  std::vector<float> logits(held.ids.size() * vocab, 0.f);
  for (std::size_t r = 0; r < held.targets.size(); ++r) {
    logits[r * vocab + static_cast<std::size_t>(std::max(held.targets[r], 0))] = 1.f;
  }
  CHECK(attn::accuracy(logits, held, vocab) == 1.0);
  // Predicting the current token instead (a copy of the input) is wrong almost everywhere.
  std::vector<float> echo(held.ids.size() * vocab, 0.f);
  for (std::size_t r = 0; r < held.ids.size(); ++r) {
    echo[r * vocab + static_cast<std::size_t>(held.ids[r])] = 1.f;
  }
  CHECK(attn::accuracy(echo, held, vocab) < 0.5);
}

TEST_CASE("uniform_index stays in range and covers it", "[tasks]") {
  attn::NumpyRandomState rng(3);
  std::vector<int> seen(7, 0);
  for (int k = 0; k < 7000; ++k) {
    const std::size_t v = attn::uniform_index(rng, 7);
    REQUIRE(v < 7);
    ++seen[v];
  }
  for (const int count : seen) CHECK(std::abs(count - 1000) < 150);
  CHECK(attn::uniform_index(rng, 1) == 0);
}
