// CheckpointHandle: a streamed checkpoint import for JS (ATTN_BINDINGS_FULL_API builds only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attention/model/checkpoint_import.hpp"
#include "attention/text/gguf_tokenizer.hpp"
#include "bindings/common.hpp"
#include "bindings/model_handle.hpp"

namespace attn::bindings {

// A streamed checkpoint import (any family, .safetensors or pytorch_model.bin, one file or its
// shards): open([size…]) and then each provide([bytes…]) return the byte ranges the core needs
// next ([{ file, begin, end }], [] once every file is described: the core decides the steps);
// begin(config.json's text, or null for a GGUF file, whose metadata holds it) lists the reads
// ({ file, name, begin, end, whole, format }); for each chunk
// the JS API writes the file's bytes into buffer(size) and calls read(); finish() hands the
// model over.
class CheckpointHandle {
 public:
  val open(val file_sizes);
  val provide(val bytes);
  val begin(val config_json);
  // { vocab, family, gpt2, missing, eos, json? } after begin(): the model's vocabulary size, its
  // family, whether GPT-2's own tokenizer serves when none is given, otherwise what tokenize says,
  // config.json's end-of-text ids within the vocabulary; a GGUF file's tokenizer as
  // tokenizer.json's text when its metadata has one the core reads.
  val tokenizerNeed() const;
  // The bytes the model's parameters will take in memory (known once begin() has read the headers):
  // F16/BF16 matrices 2 a value, GGUF's quantized ones their blocks, the rest 4.
  val memoryBytes() const;
  // A view of `size` bytes of wasm memory for the next chunk (valid until the next allocation).
  val buffer(std::size_t size);
  val read(std::size_t index, std::size_t size, double offset);
  val finish(ModelHandle& model);

 private:
  std::unique_ptr<attn::CheckpointFiles> files_;
  std::unique_ptr<attn::CheckpointImport> import_;
  const attn::FamilyDescription* family_ = nullptr;
  std::vector<std::int32_t> eos_;
  std::optional<attn::GgufTokenizer> gguf_tokenizer_;  // a GGUF file's
  std::vector<std::uint8_t> buffer_;
};

}  // namespace attn::bindings
