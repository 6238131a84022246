// Trainer: AdamW steps of a Model on a Task's batches, with held-out loss and accuracy, and a
// stop with the last good weights when the loss diverges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "attention/fields.hpp"
#include "attention/model/model.hpp"
#include "attention/train/head_scores.hpp"
#include "attention/train/optimizer.hpp"
#include "attention/train/tasks.hpp"

namespace attn {

struct TrainerConfig {
  TaskKind task = TaskKind::Induction;
  std::size_t batch = 32;      // sequences per step, 1 … Task::kMaxBatch
  std::size_t held_out = 256;  // held-out sequences (Task's fixed set)
  std::uint32_t seed = 1;      // the task's batches (the model has its own seed)
  AdamWConfig optimizer;       // lr, betas, eps, weight decay, clip, schedule
};

// createTrainer's options by their JS API names (fields.hpp): the trainer's and its optimizer's.
template <class Visitor>
void visit_fields(TrainerConfig& c, Visitor& v) {
  v.choice("task", c.task, task_kinds(), parse_task_kind);
  v.number("lr", c.optimizer.lr);
  v.count("batch", c.batch, 0, kFieldSizeMax);
  v.number("weightDecay", c.optimizer.weight_decay);
  v.number("clip", c.optimizer.clip);
  v.count("seed", c.seed, 0, kFieldSizeMax);
  v.number("beta1", c.optimizer.beta1);
  v.number("beta2", c.optimizer.beta2);
  v.number("eps", c.optimizer.eps);
  v.count("warmup", c.optimizer.warmup_steps, 0, kFieldSizeMax);
  v.count("totalSteps", c.optimizer.total_steps, 0, kFieldSizeMax);
  v.number("minLr", c.optimizer.min_lr);
  v.count("heldOut", c.held_out, 0, kFieldSizeMax);
}

// What step(k) reports: the last step's training loss, and (unless the caller said not to
// evaluate) the held-out set's mean cross-entropy and next-token accuracy after it.
struct TrainReport {
  std::size_t step = 0;    // steps taken so far (1-based count of the last one)
  double loss = 0.0;       // training loss of the last step's batch (before its update)
  bool evaluated = false;  // false: held_out_loss and accuracy were not computed
  double held_out_loss = 0.0;
  double accuracy = 0.0;  // fraction of held-out targets whose argmax logit is the target
};

// Held-out loss and accuracy of `model` on `batch`, evaluated in chunks of `chunk` sequences
// (with `ablation`, that head's output zeroed: see Model::forward).
struct Evaluation {
  double loss = 0.0;
  double accuracy = 0.0;
};
Evaluation evaluate(Model& model, const Batch& batch, std::size_t chunk = 32,
                    std::optional<HeadAblation> ablation = std::nullopt);

// Every layer's head scores on a probe (see head_scores.hpp): [layer][head]. The probe's
// sequences must fit the model (n <= context, ids < vocab).
std::vector<std::vector<HeadScores>> model_head_scores(Model& model, const Batch& probe);

class Trainer {
 public:
  // The model is borrowed: it must outlive the trainer. Throws attn::Error when the task does
  // not fit the model (a vocabulary larger than the model's, a context longer than its own),
  // or for a batch or optimizer setting out of bounds.
  Trainer(Model& model, const TrainerConfig& config);

  // Runs k >= 1 steps (each: a fresh batch, loss and gradients, clipping, AdamW), then, with
  // `evaluate`, evaluates the held-out set (a forward of all its sequences: with the default 256
  // held-out and batch 32 it costs about as much as three steps). Deterministic: the same model
  // seed, config and calls give the same reports bit for bit. When a loss or the gradient norm is
  // NaN or ±∞ the model is put back to the last weights whose loss was finite (and the optimizer's
  // moments with them), and attn::Error says "diverged at step N: loss is NaN; lower the learning
  // rate".
  TrainReport step(std::size_t k = 1, bool evaluate = true);

  // The held-out set's loss and accuracy now (what step(k) adds with `evaluate`).
  Evaluation evaluate_held_out();

  std::size_t steps() const { return optimizer_.steps(); }
  const Task& task() const { return task_; }
  const TrainerConfig& config() const { return config_; }

 private:
  Model& model_;
  TrainerConfig config_;
  Task task_;
  AdamW optimizer_;
  // The last weights whose loss was finite, and the optimizer's state when they were current.
  std::vector<float> good_parameters_;
  AdamW good_optimizer_;
};

}  // namespace attn
