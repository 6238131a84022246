// A model's parameters set by name and its .safetensors files: every parameter under its name (F32)
// with the config as metadata, read back for the same config.
#include <algorithm>
#include <map>
#include <string>

#include "attention/error.hpp"
#include "attention/io/safetensors.hpp"
#include "attention/message_text.hpp"
#include "attention/model/model.hpp"

namespace attn {

std::vector<std::uint8_t> Model::save_safetensors() const {
  std::vector<safetensors::TensorToWrite> tensors;
  for (const auto& info : table_) {
    tensors.push_back(safetensors::make_f32(info.name, info.shape, parameter_values(info.name)));
  }
  const auto flag = [](bool value) { return std::string(value ? "true" : "false"); };
  const SmallModelOptions options = small_model_options(config_);
  std::map<std::string, std::string> metadata{
      {"format", "attention-lens-model"},
      {"vocab", std::to_string(config_.vocab)},
      {"context", std::to_string(config_.context)},
      {"d_model", std::to_string(config_.d_model)},
      {"heads", std::to_string(config_.heads)},
      {"layers", std::to_string(config_.layers)},
      {"positional", positional_kind_name(config_.positional)},
      {"layer_norm", flag(options.layer_norm)},
      {"mlp", flag(options.mlp)},
      {"tied", flag(config_.tied)},
      {"bias", flag(options.bias)},
      {"gelu", gelu_kind_name(options.gelu)}};
  return safetensors::write(tensors, metadata);
}

void Model::set_parameter(const std::string& name, std::span<const float> values) {
  const ParameterInfo& info = parameter_info(name);
  parameter(name);  // a 2-byte one throws, naming it
  if (values.size() != info.size) {
    throw Error("parameter '" + name + "' " + shape_text(info.shape) + " needs " +
                std::to_string(info.size) + " values, got " + std::to_string(values.size()));
  }
  std::copy(values.begin(), values.end(), params_.begin() + std::ptrdiff_t(info.offset));
}

void Model::load_safetensors(std::span<const std::uint8_t> bytes) {
  if (has_half_parameters()) {
    throw Error(
        "this model keeps a checkpoint's 2-byte or quantized weights: load the checkpoint again "
        "instead");
  }
  const auto file = safetensors::File::parse(bytes);
  for (const auto& info : file.tensors()) {
    bool known = false;
    for (const auto& mine : table_) known = known || mine.name == info.name;
    if (!known) {
      throw Error("the checkpoint's tensor '" + info.name + "' " + shape_text(info.shape) +
                  " is not a parameter of this model (another config?)");
    }
  }
  AlignedVector<float> loaded(params_.size());
  for (const auto& mine : table_) {
    if (!file.contains(mine.name)) {
      throw Error("the checkpoint has no tensor '" + mine.name + "' " + shape_text(mine.shape) +
                  ", which this model needs (another config?)");
    }
    const auto& info = file.info(mine.name);
    if (info.shape != mine.shape) {
      throw Error("the checkpoint's tensor '" + mine.name + "' has shape " +
                  shape_text(info.shape) + ", this model needs " + shape_text(mine.shape) +
                  " (another config?)");
    }
    if (info.dtype != safetensors::DType::F32) {
      throw Error("the checkpoint's tensor '" + mine.name + "' is " +
                  safetensors::dtype_name(info.dtype) + ", expected F32");
    }
    const auto values = file.f32(mine.name);
    std::copy(values.begin(), values.end(), loaded.begin() + std::ptrdiff_t(mine.offset));
  }
  std::copy(loaded.begin(), loaded.end(), params_.begin());  // the buffer stays where it is
  packed_current_ = false;
  traced_layers_.clear();  // they borrowed the old weights
}

}  // namespace attn
