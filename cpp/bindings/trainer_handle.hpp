// TrainerHandle: a Trainer over a ModelHandle's model for JS (ATTN_BINDINGS_FULL_API builds only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attention/train/trainer.hpp"
#include "bindings/common.hpp"
#include "bindings/model_handle.hpp"

namespace attn::bindings {

// A trainer borrows its ModelHandle's model: the JS API disposes the trainer before the model.
class TrainerHandle {
 public:
  // createTrainer's options, read by TrainerConfig's field list (the JS API filled its defaults).
  val configure(ModelHandle& model, val options);
  // {step, loss, heldOutLoss, accuracy}; without evaluate {step, loss}.
  val step(std::size_t k, bool evaluate);
  // {step, heldOutLoss, accuracy}: the held-out set now.
  val evaluate();
  std::size_t steps() const { return trainer_->steps(); }
  std::string taskName() const;
  std::string vocabulary() const;
  val encode(const std::string& text);
  val decode(val ids);
  // {batch, n, ids, targets} of the held-out set (views the JS API copies at once).
  val heldOut() const;

 private:
  std::unique_ptr<attn::Trainer> trainer_;
  std::vector<std::int32_t> ids_;
};

}  // namespace attn::bindings
