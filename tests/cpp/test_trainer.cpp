// The trainer: training lowers the held-out loss, runs are bit-identical, a diverging learning
// rate stops with the step named and the last good weights kept, and mismatched settings fail.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/model/model.hpp"
#include "attention/ops/cross_entropy.hpp"
#include "attention/train/trainer.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

// vocab 28: the copy task's vocabulary (a-z, '|' and '.').
attn::SmallModelOptions copy_model() {
  return {.vocab = 28, .context = 12, .d_model = 32, .heads = 4, .layers = 2, .seed = 3};
}

attn::TrainerConfig copy_training() {
  attn::TrainerConfig t;
  t.task = attn::TaskKind::Copy;
  t.batch = 16;
  t.held_out = 64;
  t.seed = 5;
  t.optimizer.lr = 3e-3;
  return t;
}

bool all_finite(std::span<const float> values) {
  for (float v : values) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("training lowers the held-out loss and raises accuracy on the copy task", "[trainer]") {
  attn::Model model(copy_model());
  attn::Trainer trainer(model, copy_training());
  const attn::Evaluation before = attn::evaluate(model, trainer.task().held_out());
  // A model that knows nothing predicts about uniformly: loss near ln(28).
  CHECK(std::abs(before.loss - std::log(28.0)) < 0.5);
  const attn::TrainReport after = trainer.step(150);
  CHECK(after.step == 150);
  CHECK(trainer.steps() == 150);
  CHECK(after.held_out_loss < before.loss - 0.8);
  CHECK(after.accuracy > before.accuracy + 0.15);
  CHECK(std::isfinite(after.loss));
}

TEST_CASE("training is deterministic: the same seeds give bit-identical reports", "[trainer]") {
  attn::Model a(copy_model()), b(copy_model());
  attn::Trainer ta(a, copy_training()), tb(b, copy_training());
  for (int round = 0; round < 3; ++round) {
    const attn::TrainReport ra = ta.step(4), rb = tb.step(4);
    CHECK(ra.loss == rb.loss);
    CHECK(ra.held_out_loss == rb.held_out_loss);
    CHECK(ra.accuracy == rb.accuracy);
  }
  const auto pa = a.parameters(), pb = b.parameters();
  CHECK(std::vector<float>(pa.begin(), pa.end()) == std::vector<float>(pb.begin(), pb.end()));
}

TEST_CASE("step(k, false) trains the same without evaluating; evaluate_held_out evaluates",
          "[trainer]") {
  attn::Model a(copy_model()), b(copy_model());
  attn::Trainer ta(a, copy_training()), tb(b, copy_training());
  const attn::TrainReport evaluated = ta.step(6);
  const attn::TrainReport quiet = tb.step(6, false);
  CHECK(evaluated.evaluated);
  CHECK_FALSE(quiet.evaluated);
  CHECK(quiet.step == 6);
  CHECK(quiet.loss == evaluated.loss);
  const auto pa = a.parameters(), pb = b.parameters();
  CHECK(std::vector<float>(pa.begin(), pa.end()) == std::vector<float>(pb.begin(), pb.end()));
  // Evaluating afterwards gives what step(k) reported, and the free evaluate() on the same set.
  const attn::Evaluation later = tb.evaluate_held_out();
  CHECK(later.loss == evaluated.held_out_loss);
  CHECK(later.accuracy == evaluated.accuracy);
  const attn::Evaluation direct = attn::evaluate(b, tb.task().held_out());
  CHECK(direct.loss == later.loss);
  CHECK(tb.steps() == 6);  // evaluating takes no step
}

TEST_CASE("evaluate: chunking does not change the held-out loss and accuracy", "[trainer]") {
  attn::Model model(copy_model());
  attn::Trainer trainer(model, copy_training());
  trainer.step(5);
  const attn::Batch& held_out = trainer.task().held_out();
  const attn::Evaluation whole = attn::evaluate(model, held_out, held_out.batch);
  const attn::Evaluation ones = attn::evaluate(model, held_out, 1);
  const attn::Evaluation sevens = attn::evaluate(model, held_out, 7);
  CHECK(std::abs(whole.loss - ones.loss) < 1e-5);
  CHECK(std::abs(whole.loss - sevens.loss) < 1e-5);
  CHECK(whole.accuracy == ones.accuracy);
  CHECK(whole.accuracy == sevens.accuracy);
  // The whole-batch loss is the mean cross-entropy of the forward's logits (reference).
  const attn::ModelOutput out = model.forward(held_out.ids, held_out.batch, held_out.n);
  std::vector<double> logits(out.logits.begin(), out.logits.end()), probs(logits.size());
  const double reference = attn::reference::cross_entropy_forward(
      logits.data(), held_out.targets.data(), probs.data(), held_out.batch * held_out.n, 28);
  CHECK(std::abs(whole.loss - reference) < 1e-5);
}

TEST_CASE("a diverging learning rate stops with the step named and the last good weights kept",
          "[trainer]") {
  attn::Model model(copy_model());
  attn::TrainerConfig config = copy_training();
  config.optimizer.lr = 1e30;
  config.optimizer.clip = 0.0;
  attn::Trainer trainer(model, config);
  std::string message;
  std::size_t steps_before = 0;
  try {
    for (int i = 0; i < 50; ++i) {
      steps_before = trainer.steps();
      trainer.step(1);
    }
  } catch (const attn::Error& e) {
    message = e.what();
  }
  REQUIRE_THAT(message, ContainsSubstring("diverged at step " + std::to_string(steps_before + 1)));
  CHECK_THAT(message, ContainsSubstring("lower the learning rate"));
  // The weights are those whose loss was last finite: finite, and a forward on them is finite.
  CHECK(all_finite(model.parameters()));
  const attn::Batch& held_out = trainer.task().held_out();
  const attn::Evaluation kept = attn::evaluate(model, held_out);
  CHECK(std::isfinite(kept.loss));
}

TEST_CASE("trainer settings that do not fit the model are errors", "[trainer]") {
  attn::SmallModelOptions small = copy_model();
  small.vocab = 10;
  attn::Model model(small);
  CHECK_THROWS_WITH(attn::Trainer(model, copy_training()),
                    ContainsSubstring("the copy task has 28 tokens but the model's vocabulary has "
                                      "10; create the model with vocab >= 28"));
  attn::Model fits(copy_model());
  attn::TrainerConfig zero = copy_training();
  zero.batch = 0;
  CHECK_THROWS_WITH(attn::Trainer(fits, zero),
                    ContainsSubstring("batch must be between 1 and 65536, got 0"));
  attn::TrainerConfig bad_lr = copy_training();
  bad_lr.optimizer.lr = -1.0;
  CHECK_THROWS_AS(attn::Trainer(fits, bad_lr), attn::Error);
  attn::Trainer trainer(fits, copy_training());
  CHECK_THROWS_WITH(trainer.step(0), ContainsSubstring("k >= 1"));
}
