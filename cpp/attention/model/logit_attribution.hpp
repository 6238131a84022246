// Direct logit attribution (TransformerLens's decompose_resid / stack_head_results with
// apply_ln_to_stack and logit_diff_directions): how much each head, each MLP and the embeddings
// write, directly, into the difference logit[a] − logit[b] at the last position, through the
// final norm with its scale frozen from this run.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "attention/model/model.hpp"

namespace attn {

// The parts of logit[a] − logit[b] at the last position. Each part p (a d_model vector the
// residual stream sums) contributes p̃ · (w ⊙ (W_U[a] − W_U[b])) / scale, where w is the final
// norm's weight (Gemma's 1 + w), scale the final norm's from this run (TransformerLens's
// ln_final.hook_scale: √(var + ε) of the last residual for LayerNorm, √(mean x² + ε) for
// RMSNorm, 1 without a norm) and p̃ = p − mean(p) for LayerNorm (each part mean-centred), p for
// RMSNorm. The model has no unembedding bias (no family the core reads has one), so
//   total = embed + Σ heads + Σ attention_bias + Σ mlp + constant
// to float rounding, and total is the forward's own logit[a] − logit[b].
struct LogitAttribution {
  double total = 0.0;     // the forward's logit[a] − logit[b] at the last position
  double embed = 0.0;     // the blocks' input: the token embedding (× the embedding scale) plus
                          // the learned or sinusoidal positions where the model has them
  double constant = 0.0;  // the final norm's bias: b · (W_U[a] − W_U[b]) (0 without one)
  // [layers, heads], layer × heads + head: the head's z (hook_z: its columns of the heads'
  // concatenated A·V, as ablated) times its columns of out_proj's weight (W_O)
  std::vector<float> heads;
  std::vector<float> attention_bias;  // [layers]: out_proj's bias (0 without one)
  std::vector<float> mlp;             // [layers]: the MLP's output, its bias included (0 without)
};

// Why the residual stream of this model does not split into linear parts (for attribute's
// refusal), or empty when it does: a norm after a sublayer (Gemma 2 and 3, OLMo 2) rescales each
// sublayer's output by its own statistics before the residual adds it, and a final logit
// soft-cap (Gemma 2) bends the logits after the final norm.
std::string attribution_refusal(const ModelConfig& config);

// Runs the model on one sequence ids [n] (the heads ablated now are ablated) and splits the
// logit difference of answers a and b. Throws attn::Error naming the reason for a model whose
// residual stream does not split (attribution_refusal), for empty ids, an id out of range
// (naming it and the vocabulary) or an answer not in the vocabulary.
LogitAttribution logit_attribution(Model& model, std::span<const std::int32_t> ids, std::int32_t a,
                                   std::int32_t b);

}  // namespace attn
