// One layer's weights read from and written to .safetensors tensors under a name prefix ("" for
// a lone layer's state_dict, "layers.0.attn." for a layer of a model), outside the layer class.
#pragma once

#include <string_view>
#include <vector>

#include "attention/io/safetensors.hpp"
#include "attention/layer/weights.hpp"

namespace attn {

// The tensors prefix + {in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias} that a
// layer of `shape` has (F32, checked by name and shape). Every tensor of the file under the
// prefix must be one of them (with an empty prefix: every tensor of the file). Missing, extra or
// misshapen tensors throw attn::Error naming them; the values are validated by the caller.
LayerWeights read_layer_weights(const safetensors::File& file, const WeightShape& shape,
                                std::string_view prefix = "");

// The layer's tensors, named prefix + state_dict name, in state_dict order.
std::vector<safetensors::TensorToWrite> layer_tensors(const LayerWeightsView& weights,
                                                      const WeightShape& shape,
                                                      std::string_view prefix = "");
inline std::vector<safetensors::TensorToWrite> layer_tensors(const LayerWeights& weights,
                                                             const WeightShape& shape,
                                                             std::string_view prefix = "") {
  return layer_tensors(view_of(weights), shape, prefix);
}

}  // namespace attn
