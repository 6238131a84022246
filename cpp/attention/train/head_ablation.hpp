// Head ablation: the probe's loss with each head's output zeroed in turn, beside the full model's.
#pragma once

#include <vector>

#include "attention/model/model.hpp"
#include "attention/train/batch.hpp"

namespace attn {

struct AblatedHead {
  double loss = 0.0;   // the probe's mean cross-entropy with this head zeroed
  double delta = 0.0;  // loss − the unablated loss: how much the probe needs this head
};

struct HeadAblationResult {
  double loss = 0.0;                            // the probe's mean cross-entropy, nothing ablated
  std::vector<std::vector<AblatedHead>> heads;  // [layer][head]
};

// For every (layer, head): the mean cross-entropy over probe's scored targets with that head's
// context zeroed (Model::forward's HeadAblation). The model's weights are not changed. Throws
// attn::Error when the probe does not fit the model or scores no target.
HeadAblationResult head_ablation(Model& model, const Batch& probe);

}  // namespace attn
