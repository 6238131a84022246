// AdamW, gradient clipping and the learning-rate schedule, see optimizer.hpp.
#include "attention/train/optimizer.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include "attention/error.hpp"

namespace attn {

void validate(const AdamWConfig& c) {
  const auto check = [](const char* field, double value, bool ok, const char* bound) {
    if (!std::isfinite(value) || !ok) {
      throw Error(std::string(field) + " must be " + bound + ", got " + std::to_string(value));
    }
  };
  check("lr", c.lr, c.lr > 0, "> 0");
  check("beta1", c.beta1, c.beta1 >= 0 && c.beta1 < 1, "in [0, 1)");
  check("beta2", c.beta2, c.beta2 >= 0 && c.beta2 < 1, "in [0, 1)");
  check("eps", c.eps, c.eps > 0, "> 0");
  check("weight_decay", c.weight_decay, c.weight_decay >= 0, ">= 0");
  check("clip", c.clip, c.clip >= 0, ">= 0 (0 = no clipping)");
  check("min_lr", c.min_lr, c.min_lr >= 0 && c.min_lr <= c.lr, "between 0 and lr");
}

double learning_rate(const AdamWConfig& c, std::size_t step) {
  if (step <= c.warmup_steps) return c.lr * double(step) / double(c.warmup_steps);
  if (c.total_steps <= c.warmup_steps) return c.lr;
  if (step >= c.total_steps) return c.min_lr;
  const double progress = double(step - c.warmup_steps) / double(c.total_steps - c.warmup_steps);
  return c.min_lr + 0.5 * (c.lr - c.min_lr) * (1.0 + std::cos(std::numbers::pi * progress));
}

double clip_grad_norm(std::span<float> grads, double max_norm) {
  double sum = 0.0;
  for (float g : grads) sum += double(g) * double(g);
  const double norm = std::sqrt(sum);
  const double coef = max_norm / (norm + 1e-6);
  if (max_norm > 0 && coef < 1.0) {
    const float scale = float(coef);
    for (float& g : grads) g *= scale;
  }
  return norm;
}

AdamW::AdamW(std::size_t parameter_count, const AdamWConfig& config)
    : config_(config), m_(parameter_count, 0.0f), v_(parameter_count, 0.0f) {
  validate(config_);
}

double AdamW::step(std::span<float> params, std::span<const float> grads) {
  if (params.size() != m_.size() || grads.size() != m_.size()) {
    throw Error("AdamW was made for " + std::to_string(m_.size()) + " parameters, got " +
                std::to_string(params.size()) + " parameters and " + std::to_string(grads.size()) +
                " gradients");
  }
  ++steps_;
  const double lr = learning_rate(config_, steps_);
  const float decay = float(1.0 - lr * config_.weight_decay);
  const float b1 = float(config_.beta1), b2 = float(config_.beta2);
  const float one_minus_b1 = float(1.0 - config_.beta1), one_minus_b2 = float(1.0 - config_.beta2);
  const double bias_correction1 = 1.0 - std::pow(config_.beta1, double(steps_));
  const double bias_correction2 = 1.0 - std::pow(config_.beta2, double(steps_));
  const float step_size = float(lr / bias_correction1);
  const float bc2_sqrt = float(std::sqrt(bias_correction2));
  const float eps = float(config_.eps);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const float g = grads[i];
    params[i] *= decay;
    m_[i] = m_[i] * b1 + g * one_minus_b1;
    v_[i] = v_[i] * b2 + g * g * one_minus_b2;
    const float denom = std::sqrt(v_[i]) / bc2_sqrt + eps;
    params[i] -= step_size * m_[i] / denom;
  }
  return lr;
}

}  // namespace attn
