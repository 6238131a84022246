// Head ablation over every layer and head (head_ablation.hpp).
#include "attention/train/head_ablation.hpp"

#include "attention/train/trainer.hpp"

namespace attn {

HeadAblationResult head_ablation(Model& model, const Batch& probe) {
  HeadAblationResult result;
  result.loss = evaluate(model, probe).loss;
  const ModelConfig& config = model.config();
  result.heads.assign(config.layers, std::vector<AblatedHead>(config.heads));
  for (std::size_t layer = 0; layer < config.layers; ++layer) {
    for (std::size_t head = 0; head < config.heads; ++head) {
      const double loss = evaluate(model, probe, 32, HeadAblation{layer, head}).loss;
      result.heads[layer][head] = {loss, loss - result.loss};
    }
  }
  return result;
}

}  // namespace attn
