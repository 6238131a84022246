// The model's backward (llm.c's style: each op's backward beside its forward, in ops/): the
// cross-entropy of the next-token logits and its gradient with respect to every parameter, through
// the activations the forward kept.
#include <string>

#include "attention/error.hpp"
#include "attention/model/model.hpp"
#include "attention/ops/cross_entropy.hpp"
#include "attention/ops/embedding.hpp"
#include "attention/ops/gelu.hpp"
#include "attention/ops/layernorm.hpp"
#include "attention/ops/rope.hpp"

namespace attn {

namespace {

void resize(AlignedVector<float>& buffer, std::size_t size) {
  buffer.resize(size);
}
void zero(AlignedVector<float>& buffer, std::size_t size) {
  buffer.assign(size, 0.0f);
}

}  // namespace

float Model::loss_and_gradients(std::span<const std::int32_t> ids,
                                std::span<const std::int32_t> targets, std::size_t batch,
                                std::size_t n) {
  check_ids(ids, batch, n);
  if (const std::string what = untrainable_switch(config_); !what.empty()) {
    throw Error("this model cannot be trained: " + what +
                " has a forward here but no backward (training's backward covers LayerNorm "
                "before each sublayer, a plain GELU MLP and RoPE on every dimension)");
  }
  if (has_half_parameters()) {
    throw Error(
        std::string("this model cannot be trained: its weights are kept in the checkpoint's ") +
        (has_quantized_parameters()
             ? "quantized blocks (a GGUF file's Q8_0, Q4_K, …, or its F32 / F16 / BF16 values)"
             : "2-byte form (F16 or BF16)") +
        "; load an F32 .safetensors checkpoint to train it");
  }
  if (targets.size() != ids.size()) {
    throw Error("targets has " + std::to_string(targets.size()) +
                " values, expected batch * n = " + std::to_string(ids.size()));
  }
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (targets[i] >= 0 && std::size_t(targets[i]) >= config_.vocab) {
      throw Error("target " + std::to_string(targets[i]) + " at index " + std::to_string(i) +
                  " is out of range: the vocabulary has ids 0 to " +
                  std::to_string(config_.vocab - 1) + " (a target < 0 is ignored)");
    }
  }
  if (count_targets(targets.data(), targets.size()) == 0) {
    throw Error("every target is ignored (< 0): there is nothing to learn from");
  }
  run_forward(ids.data(), batch, n, head_scales_);

  const std::size_t d = config_.d_model, M = batch * n, V = config_.vocab;
  const AttentionShape shape = attention_shape(config_);
  const std::size_t row = shape.row(), width = shape.q_width(), W = mlp_width(config_);
  const bool ln = config_.norm != NormKind::None;
  resize(probs_, M * V);
  const float loss = cross_entropy_forward(logits_.data(), targets.data(), probs_.data(), M, V);

  grads_.assign(params_.size(), 0.0f);
  resize(d_logits_, M * V);
  cross_entropy_backward(probs_.data(), targets.data(), d_logits_.data(), M, V);

  // logits = h_f · unembedᵀ, h_f = ln_f(x_L) or x_L
  const float* x_last = residual_[config_.layers].data();
  zero(d_resid_, M * d);
  if (ln) {
    zero(d_h_, M * d);
    linear_backward(d_logits_.data(), lnf_.data(), p(unembed_), d_h_.data(), g(unembed_), nullptr,
                    M, d, V, linear_scratch_);
    layernorm_backward(d_h_.data(), x_last, p(lnf_w_), lnf_mean_.data(), lnf_rstd_.data(),
                       d_resid_.data(), g(lnf_w_), g(lnf_b_), M, d);
  } else {
    linear_backward(d_logits_.data(), x_last, p(unembed_), d_resid_.data(), g(unembed_), nullptr, M,
                    d, V, linear_scratch_);
  }

  for (std::size_t l = config_.layers; l-- > 0;) {
    const Layer& w = layers_[l];
    BlockActivations& a = acts_[l];
    // d_resid = ∂L/∂x_{l+1}; x_{l+1} = mid + proj(GELU(fc(ln2(mid)))) with mlp, else mid.
    if (has_mlp(config_, l)) {
      zero(d_gelu_, M * W);
      zero(d_fc_, M * W);
      linear_backward(d_resid_.data(), a.act.data(), p(w.proj_w), d_gelu_.data(), g(w.proj_w),
                      g(w.proj_b), M, W, d, linear_scratch_);
      gelu_backward(d_gelu_.data(), a.fc.data(), d_fc_.data(), M * W,
                    gelu_kind(config_.blocks[l].activation));
      if (ln) {
        zero(d_h_, M * d);
        linear_backward(d_fc_.data(), a.ln2.data(), p(w.fc_w), d_h_.data(), g(w.fc_w), g(w.fc_b), M,
                        d, W, linear_scratch_);
        layernorm_backward(d_h_.data(), a.mid.data(), p(w.ln2_w), a.ln2_mean.data(),
                           a.ln2_rstd.data(), d_resid_.data(), g(w.ln2_w), g(w.ln2_b), M, d);
      } else {
        linear_backward(d_fc_.data(), a.mid.data(), p(w.fc_w), d_resid_.data(), g(w.fc_w),
                        g(w.fc_b), M, d, W, linear_scratch_);
      }
    }
    // d_resid = ∂L/∂mid; mid = x_l + out_proj(attention(in_proj(ln1(x_l))))
    zero(d_ctx_, M * width);
    zero(d_qkv_, M * row);
    linear_backward(d_resid_.data(), a.ctx.data(), p(w.out_w), d_ctx_.data(), g(w.out_w),
                    g(w.out_b), M, width, d, linear_scratch_);
    // An ablated head's context was scaled (zeroed) after A·V: its gradient is scaled alike.
    ablate_heads(shape, block_ablation(l, head_scales_, std::nullopt), d_ctx_.data(), M);
    causal_attention_backward(d_ctx_.data(), a.qkv.data(), a.att.data(), d_qkv_.data(), batch, n,
                              shape, attention_scratch_);
    if (config_.positional == PositionalKind::Rope) {
      rope_backward(d_qkv_.data(), batch, n, shape, config_.blocks[l].rope);
    }
    if (ln) {
      zero(d_h_, M * d);
      linear_backward(d_qkv_.data(), a.ln1.data(), p(w.in_w), d_h_.data(), g(w.in_w), g(w.in_b), M,
                      d, row, linear_scratch_);
      layernorm_backward(d_h_.data(), residual_[l].data(), p(w.ln1_w), a.ln1_mean.data(),
                         a.ln1_rstd.data(), d_resid_.data(), g(w.ln1_w), g(w.ln1_b), M, d);
    } else {
      linear_backward(d_qkv_.data(), residual_[l].data(), p(w.in_w), d_resid_.data(), g(w.in_w),
                      g(w.in_b), M, d, row, linear_scratch_);
    }
  }
  input_embedding_backward(d_resid_.data(), ids.data(), g(embed_), g(pos_), batch, n, d);
  return loss;
}

}  // namespace attn
