// Head ablation over every layer and head (head_ablation.hpp).
#include "attention/train/head_ablation.hpp"

#include "attention/train/trainer.hpp"

namespace attn {

HeadAblationResult head_ablation(Model& model, const Batch& probe) {
  HeadAblationResult result;
  result.loss = evaluate(model, probe).loss;
  const ModelConfig& config = model.config();
  result.heads.assign(config.layers, std::vector<double>(config.heads, 0.0));
  for (std::size_t layer = 0; layer < config.layers; ++layer) {
    for (std::size_t head = 0; head < config.heads; ++head) {
      result.heads[layer][head] = evaluate(model, probe, 32, HeadAblation{layer, head}).loss;
    }
  }
  return result;
}

}  // namespace attn
