// Hugging Face GPT-2-family checkpoints (model.safetensors + config.json) read into a Model: the
// tensor names, the Conv1D [in, out] layout, F16/BF16 conversion and the config cross-check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "attention/io/safetensors.hpp"
#include "attention/model/model.hpp"

namespace attn {

// config.json's fields that shape the model, as the JS API passes them (absent: the defaults,
// which are GPT-2's own).
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

// The float32 parameters a loaded checkpoint may need (a tab has a 2 GB wasm heap; the forward's
// activations need room too): gpt2 (124 M parameters, 0.5 GB) and distilgpt2 fit, gpt2-medium
// (355 M, 1.4 GB) does not.
inline constexpr std::uint64_t kMaxCheckpointParameterBytes = std::uint64_t{1} << 30;

// The largest |weight| a checkpoint may hold: with every weight within it, no forward of a model
// within the checkpoint limits can overflow float32 (LayerNorm bounds each block's input).
inline constexpr float kMaxCheckpointWeight = 1e5f;

// GPT-2's tokenizer's vocabulary size (its encoder.json and vocab.bpe, beside the JS module).
inline constexpr std::size_t kGpt2TokenizerVocab = 50257;

// The tokenizer of a checkpoint loaded without one: GPT-2's own when the model has at least its
// 50 257 ids; otherwise none, and `missing` is the message tokenize then gives.
struct DefaultTokenizer {
  bool gpt2 = false;
  std::string missing;
};
DefaultTokenizer default_tokenizer(std::size_t vocab);

// One tensor the import reads: its name in the file and its bytes' absolute file offsets.
struct Gpt2Read {
  std::string name;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

// A streamed import: the header first, then each tensor's bytes, converted straight into the
// model's parameters (the file never has to be in memory whole). Every problem throws
// attn::Error naming what was found and what is supported.
class Gpt2Import {
 public:
  // head: the file's first bytes, at least 8 + the header length (safetensors::header_length);
  // file_size: the whole file's size. Checks the names (a BERT, Llama or other checkpoint is
  // refused as such), shapes, dtypes and the config against them, and the memory needed.
  Gpt2Import(std::span<const std::uint8_t> head, std::uint64_t file_size, const Gpt2Config& config);

  const ModelConfig& model_config() const { return model_->config(); }
  // The tensors to read, by file offset (lm_head.weight, compared with wte, last).
  const std::vector<Gpt2Read>& reads() const { return reads_; }
  // Bytes of reads()[index] from byte `offset` of the tensor, converted into the model: in order,
  // in whole values, any number of chunks (a Conv1D weight, transposed, in one chunk).
  void read(std::size_t index, std::span<const std::uint8_t> bytes, std::uint64_t offset = 0);
  // Whether read() takes reads()[index] only whole (a transposed Conv1D weight).
  bool needs_whole(std::size_t index) const { return targets_.at(index).transpose; }
  // The model, once every tensor is read.
  std::unique_ptr<Model> finish();

 private:
  struct Target {
    std::string parameter;          // our name, e.g. layers.0.attn.in_proj_weight
    bool transpose = false;         // Conv1D [in, out] → our [out, in]
    bool compare_to_embed = false;  // lm_head.weight: must equal the tied embedding
    safetensors::DType dtype = safetensors::DType::F32;
    std::vector<std::size_t> shape;  // as stored
    std::uint64_t received = 0;      // bytes read so far
  };
  std::unique_ptr<Model> model_;
  std::vector<Gpt2Read> reads_;
  std::vector<Target> targets_;  // parallel to reads_
  std::vector<float> scratch_;
};

// The whole file at once (tests, the fuzz target): header, every tensor (in 64 KB chunks
// where read() takes them), finish.
std::unique_ptr<Model> load_gpt2_checkpoint(std::span<const std::uint8_t> file,
                                            const Gpt2Config& config);

}  // namespace attn
