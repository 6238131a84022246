// Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"): how
// much each position's representation after layer l draws on each input token, tracing the
// attention through every layer with the residual connection counted as attention to oneself.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "attention/model/model.hpp"

namespace attn {

// Runs the model on one sequence ids [n] (the heads ablated now are ablated, as in the forward:
// a knocked-out head's own weights still count in its layer's mean — ablation zeroes its output,
// not its pattern — and its effect shows in the layers after it) and returns [layers, n, n]:
//   Â_l = rows renormalised (0.5 · mean over heads of A_l + 0.5 · I)   (A_l: [heads, n, n])
//   R_0 = Â_0,  R_l = Â_l · R_{l−1}
// entry l = R_l (row i: query position i after layer l, column j: input token j), the order of
// the authors' compute_joint_attention (samiraabnar/attention_flow: joint_attentions[i] =
// aug_att_mat[i].dot(joint_attentions[i − 1])). Every row sums to 1 and is causal (zero past i).
// Computed in float64, rounded to float at the end. Throws attn::Error for empty ids or an id out
// of range (naming it and the vocabulary).
std::vector<float> attention_rollout(Model& model, std::span<const std::int32_t> ids);

}  // namespace attn
