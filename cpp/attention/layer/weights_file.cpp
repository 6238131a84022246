// Layer weights from and to .safetensors tensors under a name prefix (see weights_file.hpp).
#include "attention/layer/weights_file.hpp"

#include <algorithm>
#include <string>

#include "attention/error.hpp"

namespace attn {

namespace {

std::string str(std::size_t value) {
  return std::to_string(value);
}
// "[24, 8]"
std::string shape_str(const std::vector<std::size_t>& shape) {
  std::string text;
  for (auto extent : shape) text += (text.empty() ? "" : ", ") + str(extent);
  return "[" + text + "]";
}

}  // namespace

LayerWeights read_layer_weights(const safetensors::File& file, const WeightShape& shape,
                                std::string_view prefix) {
  const std::vector<WeightTensor> expected = weight_tensors(shape);
  const std::string pre(prefix);
  std::string wanted;
  for (const auto& tensor : expected) wanted += (wanted.empty() ? "" : ", ") + pre + tensor.name;
  for (const auto& tensor : file.tensors()) {
    if (tensor.name.compare(0, pre.size(), pre) != 0) continue;  // another layer's
    const bool known = std::any_of(expected.begin(), expected.end(), [&](const WeightTensor& t) {
      return tensor.name == pre + t.name;
    });
    if (!known) {
      throw Error("unexpected tensor '" + tensor.name +
                  "' in the weights file; this layer (bias: " + (shape.bias ? "true" : "false") +
                  ") takes exactly: " + wanted);
    }
  }
  for (const auto& tensor : expected) {
    const std::string name = pre + tensor.name;
    if (!file.contains(name)) {
      throw Error("the weights file has no tensor '" + name + "'; this layer takes: " + wanted);
    }
    if (file.info(name).shape != tensor.shape) {
      throw Error("tensor '" + name + "' has shape " + shape_str(file.info(name).shape) +
                  ", expected " + shape_str(tensor.shape) + " for dModel " + str(shape.d_model) +
                  " and " + str(shape.heads) + " heads");
    }
  }
  LayerWeights loaded;  // every name and shape was checked above
  for (const auto& tensor : expected) loaded.*tensor.member = file.f32(pre + tensor.name);
  return loaded;
}

std::vector<safetensors::TensorToWrite> layer_tensors(const LayerWeightsView& weights,
                                                      const WeightShape& shape,
                                                      std::string_view prefix) {
  std::vector<safetensors::TensorToWrite> tensors;
  for (const auto& tensor : weight_tensors(shape)) {
    tensors.push_back(safetensors::make_f32(std::string(prefix) + tensor.name, tensor.shape,
                                            weight_by_name(weights, tensor.name)));
  }
  return tensors;
}

}  // namespace attn
