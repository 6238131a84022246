// Hugging Face checkpoints (model.safetensors or pytorch_model.bin, or their shards, + config.json)
// and GGUF files (config from their metadata, gguf_checkpoint.hpp) read into a Model by their
// family's description (family.hpp's registry: GPT-2, the Llama family, GPT-NeoX, Qwen3, Gemma 2
// and 3, OLMo 2, Phi-3; GGUF: gpt2, llama, qwen2, gptneox, qwen3, gemma2, gemma3, phi3). Tensor
// names and layouts, F16/BF16 conversion, GGUF's quantized blocks kept as they are (or dequantized
// to float where a weight matrix mixes them with float tensors), the config cross-checked against
// the files, the memory limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attention/io/safetensors.hpp"
#include "attention/model/checkpoint_config.hpp"
#include "attention/model/checkpoint_files.hpp"
#include "attention/model/model.hpp"

namespace attn {

// The parameters' bytes a loaded checkpoint may hold in memory, F16/BF16 weight matrices kept
// 2-byte, GGUF's quantized ones in their blocks and the rest float32: 3 GiB of wasm32's 4 GB heap,
// the rest left to the forward. gpt2 (0.5 GB in F32), SmolLM2-360M (0.72 GB in BF16), Qwen2.5-0.5B
// (0.99 GB in BF16), TinyLlama-1.1B (2.2 GB in BF16), Qwen2.5-1.5B (1.1 GB in Q4_K_M) and
// Llama-3.2-3B (2.0 GB in Q4_K_M) fit; gpt2-xl in F32 (6.2 GB) or a 2 B-parameter model in BF16
// does not.
inline constexpr std::uint64_t kMaxCheckpointParameterBytes = std::uint64_t{3} << 30;

// The bytes one parameter stored as `dtype` takes in memory: a weight matrix stored F16 or BF16 is
// kept 2-byte (widened as the kernels read it), every other value is float32. (A GGUF file's
// quantized weight matrix keeps its blocks: QuantizedMatrix::bytes_for.) The memory limit and the
// page's "fits the tab" both count with it.
inline std::size_t bytes_in_memory(safetensors::DType dtype) {
  return dtype == safetensors::DType::F16 || dtype == safetensors::DType::BF16 ? 2 : 4;
}

// The largest |weight| a checkpoint may hold: with every weight within it, no forward of a model
// within the checkpoint limits can overflow float32 (the norms bound each block's input).
inline constexpr float kMaxCheckpointWeight = 1e5f;

// GPT-2's tokenizer's vocabulary size (its encoder.json and vocab.bpe, beside the JS module).
inline constexpr std::size_t kGpt2TokenizerVocab = 50257;

// The tokenizer of a checkpoint loaded without one: GPT-2's own for a GPT-2 checkpoint with at
// least its 50 257 ids; otherwise none, and `missing` is the message tokenize then gives.
struct DefaultTokenizer {
  bool gpt2 = false;
  std::string missing;
};
DefaultTokenizer default_tokenizer(const FamilyDescription& family, std::size_t vocab);

// One tensor the import reads: its file (a shard's index, 0 for a single file), its name there
// and the absolute offsets of the bytes to read for it in that file (.safetensors: its values;
// pytorch_model.bin: its storage's zip entry, local header first).
struct CheckpointRead {
  std::size_t file = 0;
  std::string name;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::string format;  // its storage type as the file names it: "F32", "BF16", "Q8_0", …
};

// The config of a checkpoint's described files: config.json's text (`config_json`) read by the
// core, or a GGUF file's metadata (gguf_checkpoint_config). A GGUF file with a config.json, or
// another format without one, is refused, saying which the file needs.
CheckpointConfig checkpoint_config_for(const std::vector<CheckpointFile>& files,
                                       const std::optional<std::string>& config_json);

// A streamed import: each file's header first, then each tensor's bytes, converted straight into
// the model's parameters (no file has to be in memory whole). Every problem throws attn::Error
// naming what was found and what is supported.
class CheckpointImport {
 public:
  // files: each file described (CheckpointFiles: one file, or the shards of
  // model.safetensors.index.json or pytorch_model.bin.index.json, either format).
  // Checks the names (another family's checkpoint is refused as such), shapes, dtypes and the
  // config against them, and the memory needed. GGUF's quantized weight matrices keep their blocks
  // unless keep_quantized is false (the reference the tests compare with: every block dequantized
  // to float32 at load, as the import did before).
  CheckpointImport(const std::vector<CheckpointFile>& files, const CheckpointConfig& config,
                   bool keep_quantized = true);
  // heads: each file's first bytes (describe_checkpoint_files: a .safetensors file's 8 + its
  // header length, a pytorch_model.bin whole); file_sizes: the whole files' sizes.
  CheckpointImport(const std::vector<std::span<const std::uint8_t>>& heads,
                   const std::vector<std::uint64_t>& file_sizes, const CheckpointConfig& config);

  const ModelConfig& model_config() const { return model_->config(); }
  // The bytes the model's parameters take in memory (the limit's count).
  std::uint64_t parameter_bytes() const { return model_->parameter_bytes(); }
  // The tensors to read, by file and offset (a tied lm_head, compared with the embedding, last).
  const std::vector<CheckpointRead>& reads() const { return reads_; }
  // Bytes of reads()[index] from byte `offset` of its range, converted into the model: in order,
  // any number of chunks of any size (a value or quantized block split between two waits for the
  // rest), or in one chunk when needs_whole.
  void read(std::size_t index, std::span<const std::uint8_t> bytes, std::uint64_t offset = 0);
  // Whether read() takes reads()[index] only whole: a transposed Conv1D weight, or a
  // pytorch_model.bin tensor whose strides are not row-major (gathered from its storage).
  bool needs_whole(std::size_t index) const {
    const Target& target = targets_.at(index);
    return target.transpose || (target.zip && !target.zip->tensor.contiguous);
  }
  // The model, once every tensor is read.
  std::unique_ptr<Model> finish();

 private:
  // Row-major value bytes of reads()[index] from byte `offset` of its values, into the model.
  void store(std::size_t index, std::span<const std::uint8_t> bytes, std::uint64_t offset);
  void read_zip(std::size_t index, std::span<const std::uint8_t> bytes, std::uint64_t offset);

  struct Target {
    std::string parameter;          // our name, e.g. layers.0.attn.in_proj_weight
    std::size_t first_value = 0;    // where in it the stored values go (a row block's start)
    bool transpose = false;         // Conv1D [in, out] → our [out, in]
    bool compare_to_embed = false;  // a tied lm_head.weight: must equal the embedding
    safetensors::DType dtype = safetensors::DType::F32;
    std::vector<std::size_t> shape;  // as stored
    std::uint64_t received = 0;      // bytes read so far
    std::optional<HalfKind> half;    // kept in its 2-byte form (the model's parameter is)
    std::size_t per_head = 0;        // head_dim when the rows are grouped per head (PerHeadQkv)
    std::size_t rope_head_dim = 0;   // head_dim when llama.cpp permuted the rows (RopeInterleaved)
    std::optional<GgmlType> blocks;  // a GGUF block type (Q8_0, Q4_K, …)
    bool minus_one = false;          // stored 1 + w (Gemma's norms in GGUF): read as stored − 1
    bool rope_factors = false;       // rope_freqs.weight: into rope_factors_, no parameter
    bool keep_blocks = false;        // its parameter keeps them (else: dequantized to float)
    std::vector<std::uint8_t> pending;  // part of a value or block, until the next chunk
    // pytorch_model.bin: the storage's entry read, the tensor's values within its data
    struct Zip {
      zip::Entry entry;
      torch_checkpoint::TensorSource tensor;
      std::optional<std::uint64_t> data_start;  // in the entry's span, once its header is read
      std::vector<std::uint8_t> pending;        // the local header, then part of a value
      std::uint64_t stored = 0;                 // bytes of the values stored so far
    };
    std::optional<Zip> zip;

    // Where stored value `index` goes in the parameter (in values from its start).
    std::size_t destination(std::size_t index) const;
  };
  // The bytes of one stored value or quantized block.
  static std::size_t unit_bytes(const Target& target);

  const FamilyDescription* family_;
  std::optional<FamilyDescription> gguf_names_;  // a GGUF file's: the family under GGUF's names
  const FamilyDescription* names_;               // the names the files use (family_ or the view)
  std::unique_ptr<Model> model_;
  std::vector<CheckpointRead> reads_;
  std::vector<Target> targets_;  // parallel to reads_
  std::vector<float> scratch_, embed_scratch_;
  std::vector<std::uint8_t> gathered_;  // a non-contiguous tensor's values, row-major
  std::vector<float> rope_factors_;     // rope_freqs.weight's [rotated / 2], when the file has it
};

// Whole files at once (tests, the fuzz target): headers, every tensor (in 64 KB chunks where
// read() takes them), finish.
std::unique_ptr<Model> load_checkpoint(const std::vector<std::span<const std::uint8_t>>& files,
                                       const CheckpointConfig& config);
// A GGUF file in memory: its config from its metadata, then as load_checkpoint (keep_quantized:
// as CheckpointImport's).
std::unique_ptr<Model> load_gguf_checkpoint(std::span<const std::uint8_t> file,
                                            bool keep_quantized = true);

}  // namespace attn
