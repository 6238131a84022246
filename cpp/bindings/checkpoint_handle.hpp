// CheckpointHandle: a streamed GPT-2 checkpoint import for JS (ATTN_BINDINGS_TRAINING builds only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attention/model/gpt2_checkpoint.hpp"
#include "bindings/common.hpp"
#include "bindings/model_handle.hpp"

namespace attn::bindings {

// A streamed GPT-2 checkpoint import: headBytes(first 8 bytes) says how much of the file's start
// begin() needs; begin(head, config.json's text) lists the reads; for each chunk the JS API writes
// the file's bytes into buffer(size) and calls read(); finish() hands the model over.
class CheckpointHandle {
 public:
  double headBytes(val first, double file_size) const;
  val begin(val head, double file_size, const std::string& config_json);
  // { vocab, gpt2, missing } after begin(): the model's vocabulary size, whether GPT-2's own
  // tokenizer serves when none is given, and otherwise what tokenize says.
  val tokenizerNeed() const;
  // A view of `size` bytes of wasm memory for the next chunk (valid until the next allocation).
  val buffer(std::size_t size);
  val read(std::size_t index, std::size_t size, double offset);
  val finish(ModelHandle& model);

 private:
  std::unique_ptr<attn::Gpt2Import> import_;
  std::vector<std::uint8_t> buffer_;
};

}  // namespace attn::bindings
