// GPT-2's config.json as its own fields (Gpt2Config), for callers that hold them apart from a file
// (the tests, the fuzz target); the family itself is gpt2_family() (family.hpp), defined in
// gpt2.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "attention/model/checkpoint_config.hpp"
#include "attention/model/model.hpp"

namespace attn {

// GPT-2's config.json fields that shape the model (absent: the defaults, which are GPT-2's own).
struct Gpt2Config {
  std::string model_type = "gpt2";  // anything else is refused, naming it
  std::size_t n_layer = 0;
  std::size_t n_head = 0;
  std::size_t n_embd = 0;
  std::size_t n_positions = 0;
  std::size_t vocab_size = 0;
  std::size_t n_inner = 0;  // 0: null in config.json, i.e. 4·n_embd (the only width supported)
  double layer_norm_epsilon = 1e-5;
  std::string activation_function = "gelu_new";  // gelu_new | gelu_pytorch_tanh | gelu
  bool scale_attn_weights = true;                // scores / √d_k (false is not supported)
  bool scale_attn_by_inverse_layer_idx = false;  // true is not supported
};

// GPT-2's keys: n_layer, n_head, n_embd, n_positions (or n_ctx), vocab_size are required;
// model_type defaults to "gpt2", the rest to GPT-2's own values (Gpt2Config's defaults).
Gpt2Config gpt2_config(const ConfigJson& config);
// GPT-2's fields checked and turned into a model.
CheckpointConfig checkpoint_config(const Gpt2Config& config);

// One GPT-2 file with its config's fields (checkpoint_import.hpp's load_checkpoint).
std::unique_ptr<Model> load_gpt2_checkpoint(std::span<const std::uint8_t> file,
                                            const Gpt2Config& config);

}  // namespace attn
