// AdamW as torch.optim.AdamW (decoupled weight decay, bias-corrected moments), global-norm
// gradient clipping as torch.nn.utils.clip_grad_norm_, and a constant or warmup-then-cosine
// learning rate.
#pragma once

#include <cstddef>
#include <span>

#include "attention/tensor.hpp"

namespace attn {

struct AdamWConfig {
  double lr = 1e-3;  // the peak learning rate
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  // Applied to every parameter (embeddings, LayerNorm and biases included), as one
  // torch.optim.AdamW param group over model.parameters() does.
  double weight_decay = 0.01;
  double clip = 1.0;             // max global gradient norm; 0 = no clipping
  std::size_t warmup_steps = 0;  // lr·t/warmup for steps t = 1 … warmup
  std::size_t total_steps = 0;   // > warmup: cosine from lr down to min_lr at total_steps;
                                 // 0 = constant lr after the warmup
  double min_lr = 0.0;
};

// Throws attn::Error naming the field for a negative or non-finite value, β outside [0, 1).
void validate(const AdamWConfig& config);

// The learning rate of step t (1-based): warmup lr·t/warmup, then constant or
// min_lr + ½(lr − min_lr)(1 + cos(π·(t − warmup)/(total − warmup))), min_lr past total.
double learning_rate(const AdamWConfig& config, std::size_t step);

// √(Σ g²) over all of grads (summed in double); when it exceeds max_norm, scales grads by
// max_norm / (norm + 1e-6). Returns the norm before clipping. max_norm <= 0: no scaling.
double clip_grad_norm(std::span<float> grads, double max_norm);

class AdamW {
 public:
  AdamW(std::size_t parameter_count, const AdamWConfig& config);

  // One step on params [count] with grads [count] (already clipped: see clip_grad_norm):
  // p −= lr·wd·p; m = β1·m + (1−β1)·g; v = β2·v + (1−β2)·g²;
  // p −= lr/(1−β1ᵗ) · m / (√v/√(1−β2ᵗ) + ε). Returns the learning rate it used.
  double step(std::span<float> params, std::span<const float> grads);

  std::size_t steps() const { return steps_; }
  const AdamWConfig& config() const { return config_; }

 private:
  AdamWConfig config_;
  std::size_t steps_ = 0;
  AlignedVector<float> m_, v_;
};

}  // namespace attn
