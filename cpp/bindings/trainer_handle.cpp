// TrainerHandle's bindings: JS trainer options to a Trainer, its steps and held-out reports back.
#if ATTN_BINDINGS_FULL_API
#include "bindings/trainer_handle.hpp"

#include "attention/train/tasks.hpp"
#include "bindings/fields.hpp"

namespace attn::bindings {

val TrainerHandle::configure(ModelHandle& model, val options) {
  return guarded([&] {
    const attn::TrainerConfig config = read_fields<attn::TrainerConfig>(options);
    trainer_ = std::make_unique<attn::Trainer>(model.model(), config);
    return val::undefined();
  });
}

val TrainerHandle::step(std::size_t k, bool evaluate) {
  return guarded([&] {
    const attn::TrainReport report = trainer_->step(k, evaluate);
    val out = val::object();
    out.set("step", report.step);
    out.set("loss", report.loss);
    if (report.evaluated) {
      out.set("heldOutLoss", report.held_out_loss);
      out.set("accuracy", report.accuracy);
    }
    return out;
  });
}

val TrainerHandle::evaluate() {
  return guarded([&] {
    const attn::Evaluation held_out = trainer_->evaluate_held_out();
    val out = val::object();
    out.set("step", trainer_->steps());
    out.set("heldOutLoss", held_out.loss);
    out.set("accuracy", held_out.accuracy);
    return out;
  });
}

std::string TrainerHandle::taskName() const {
  return std::string(attn::task_kind_name(trainer_->task().kind()));
}

std::string TrainerHandle::vocabulary() const {
  return trainer_->task().vocabulary();
}

val TrainerHandle::encode(const std::string& text) {
  return guarded([&] {
    ids_ = trainer_->task().encode(text);
    return view_of(ids_.data(), ids_.size());
  });
}

val TrainerHandle::decode(val ids) {
  return guarded([&] { return val(trainer_->task().decode(vector_or_empty<std::int32_t>(ids))); });
}

val TrainerHandle::heldOut() const {
  const attn::Batch& held = trainer_->task().held_out();
  val out = val::object();
  out.set("batch", held.batch);
  out.set("n", held.n);
  out.set("ids", view_of(held.ids.data(), held.ids.size()));
  out.set("targets", view_of(held.targets.data(), held.targets.size()));
  return out;
}

}  // namespace attn::bindings
#endif  // ATTN_BINDINGS_FULL_API
