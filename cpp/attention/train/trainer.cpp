// Trainer: AdamW steps on a task's batches, held-out evaluation, divergence stop (trainer.hpp).
#include "attention/train/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "attention/error.hpp"
#include "attention/ops/cross_entropy.hpp"

namespace attn {

namespace {

std::string str(std::size_t value) {
  return std::to_string(value);
}

const char* non_finite_name(double value) {
  return std::isnan(value) ? "NaN" : "infinite";
}

// The sequences [first, first + count) of a batch, as a batch of their own.
Batch slice(const Batch& batch, std::size_t first, std::size_t count) {
  Batch part;
  part.batch = count;
  part.n = batch.n;
  const auto begin = std::ptrdiff_t(first * batch.n),
             end = std::ptrdiff_t((first + count) * batch.n);
  part.ids.assign(batch.ids.begin() + begin, batch.ids.begin() + end);
  part.targets.assign(batch.targets.begin() + begin, batch.targets.begin() + end);
  return part;
}

}  // namespace

Evaluation evaluate(Model& model, const Batch& batch, std::size_t chunk,
                    std::optional<HeadAblation> ablation) {
  if (chunk == 0) throw Error("the evaluation chunk must be at least 1 sequence");
  const std::size_t vocab = model.config().vocab;
  std::vector<float> probs;
  double loss_sum = 0.0, correct = 0.0;
  std::size_t counted = 0;
  for (std::size_t first = 0; first < batch.batch; first += chunk) {
    const Batch part = slice(batch, first, std::min(chunk, batch.batch - first));
    const std::size_t rows = part.batch * part.n;
    const std::size_t count = count_targets(part.targets.data(), rows);
    if (count == 0) continue;
    const ModelOutput out = model.forward(part.ids, part.batch, part.n, ablation);
    probs.resize(rows * vocab);
    const double mean =
        cross_entropy_forward(out.logits.data(), part.targets.data(), probs.data(), rows, vocab);
    loss_sum += mean * double(count);
    correct += accuracy(out.logits, part, vocab) * double(count);
    counted += count;
  }
  if (counted == 0) throw Error("the held-out set has no target to score");
  return {loss_sum / double(counted), correct / double(counted)};
}

std::vector<std::vector<HeadScores>> model_head_scores(Model& model, const Batch& probe) {
  const ModelOutput out = model.forward(probe.ids, probe.batch, probe.n);
  std::vector<std::vector<HeadScores>> scores;
  for (const auto& weights : out.attention) {
    scores.push_back(head_scores(weights, model.config().heads, probe));
  }
  return scores;
}

Trainer::Trainer(Model& model, const TrainerConfig& config)
    : model_(model),
      config_(config),
      task_(config.task, model.config().context, config.seed, config.held_out),
      optimizer_(model.parameter_count(), config.optimizer),
      good_optimizer_(optimizer_) {
  const std::size_t needed = task_.vocabulary().size();
  if (model.config().vocab < needed) {
    throw Error("the " + std::string(task_kind_name(config.task)) + " task has " + str(needed) +
                " tokens but the model's vocabulary has " + str(model.config().vocab) +
                "; create the model with vocab >= " + str(needed));
  }
  if (config.batch == 0 || config.batch > Task::kMaxBatch) {
    throw Error("batch must be between 1 and " + str(Task::kMaxBatch) + ", got " +
                str(config.batch));
  }
  if (config.batch * model.config().context > Task::kMaxTokens) {
    throw Error("batch * context = " + str(config.batch * model.config().context) +
                " tokens per step exceeds the limit of " + str(Task::kMaxTokens));
  }
  const auto params = model_.parameters();
  good_parameters_.assign(params.begin(), params.end());
}

TrainReport Trainer::step(std::size_t k, bool evaluate) {
  if (k == 0) throw Error("step(k) needs k >= 1 steps, got 0");
  TrainReport report;
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t number = optimizer_.steps() + 1;
    const Batch batch = task_.sample(config_.batch);
    const double loss = model_.loss_and_gradients(batch.ids, batch.targets, batch.batch, batch.n);
    if (!std::isfinite(loss)) {
      // The weights that gave this loss came out of the last update: go back to the ones before
      // it, whose loss was finite, and to the optimizer's state at that point.
      std::copy(good_parameters_.begin(), good_parameters_.end(), model_.parameters().begin());
      optimizer_ = good_optimizer_;
      throw Error("diverged at step " + str(number) + ": loss is " + non_finite_name(loss) +
                  "; lower the learning rate (the last good weights, after " +
                  str(optimizer_.steps()) + " steps, are kept)");
    }
    const double norm = clip_grad_norm(model_.gradients(), config_.optimizer.clip);
    if (!std::isfinite(norm)) {
      throw Error("diverged at step " + str(number) + ": the gradient norm is " +
                  non_finite_name(norm) + "; lower the learning rate (the weights are kept)");
    }
    const auto params = model_.parameters();
    std::copy(params.begin(), params.end(), good_parameters_.begin());
    good_optimizer_ = optimizer_;
    optimizer_.step(params, model_.gradients());
    report.loss = loss;
  }
  report.step = optimizer_.steps();
  if (evaluate) {
    const Evaluation held_out = evaluate_held_out();
    report.evaluated = true;
    report.held_out_loss = held_out.loss;
    report.accuracy = held_out.accuracy;
  }
  return report;
}

Evaluation Trainer::evaluate_held_out() {
  return evaluate(model_, task_.held_out());
}

}  // namespace attn
