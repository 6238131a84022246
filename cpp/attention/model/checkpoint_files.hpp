// A checkpoint's files told apart by their first bytes (.safetensors, pytorch_model.bin in
// torch.save's zip format — the legacy pickle format refused by name —, or a GGUF file) and
// described step by step: the byte ranges each file must give before its tensors are known (the
// safetensors header; the zip's end records, central directory and data.pkl; GGUF's header with
// its metadata, read as a prefix that grows until it holds it), none of them a whole file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attention/io/gguf.hpp"
#include "attention/io/safetensors.hpp"
#include "attention/io/torch_checkpoint.hpp"
#include "attention/io/zip.hpp"

namespace attn {

enum class CheckpointFormat { Safetensors, TorchZip, Gguf };

// One tensor of a checkpoint file, as the import reads it.
struct StoredTensor {
  std::string name;
  // none: an integer type (I64, I32) of a .bin, or a GGUF block type (ggml_type)
  std::optional<safetensors::DType> dtype;
  std::optional<GgmlType> ggml_type;  // GGUF only: its storage type (F32, F16, Q8_0, …)
  std::string dtype_name;             // "F32", "BF16", "I64", "Q4_K", …
  std::vector<std::size_t> shape;
  // The absolute bytes to read for it: .safetensors and GGUF its values; pytorch_model.bin its
  // storage's
  // zip entry (local header, data, data descriptor), within which `source` says where its values
  // are.
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::optional<torch_checkpoint::TensorSource> source;  // pytorch_model.bin only
  std::optional<zip::Entry> entry;                       // its storage's entry (.bin only)
};

struct CheckpointFile {
  CheckpointFormat format = CheckpointFormat::Safetensors;
  std::uint64_t size = 0;
  std::vector<StoredTensor> tensors;        // in the file's order (GGUF: its names, dims reversed)
  std::shared_ptr<const gguf::Index> gguf;  // a GGUF file's header: its metadata and tensors
};

// A range of one file's bytes: [begin, end) of files[file].
struct ByteRange {
  std::size_t file = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

// The steps: needed() lists the ranges to read (of any files), provide() takes their bytes in the
// same order, until needed() is empty; then files() describes every file. Each file starts with
// its first kFirstBytes bytes. Throws attn::Error naming the problem (and the shard, when there
// are several files) as soon as one is found.
class CheckpointFiles {
 public:
  static constexpr std::size_t kFirstBytes = torch_checkpoint::kMagicBytes;

  explicit CheckpointFiles(std::vector<std::uint64_t> file_sizes);

  const std::vector<ByteRange>& needed() const { return needed_; }
  void provide(const std::vector<std::span<const std::uint8_t>>& bytes);
  bool ready() const { return needed_.empty(); }
  // Every file, once ready().
  const std::vector<CheckpointFile>& files() const { return files_; }

 private:
  enum class Step { First, SafetensorsHead, ZipTail, ZipDirectory, ZipPickle, GgufHead, Done };
  struct State {
    Step step = Step::First;
    zip::Directory directory;
  };
  void advance(std::size_t file, const std::vector<std::span<const std::uint8_t>>& bytes);
  void describe_zip(std::size_t file, std::span<const std::uint8_t> pickle_span,
                    std::span<const std::uint8_t> byteorder_span);
  void describe_gguf(std::size_t file, gguf::Index index);

  std::vector<CheckpointFile> files_;
  std::vector<State> states_;
  std::vector<ByteRange> needed_;
};

// Every file described from bytes in memory: `heads` each file's first bytes (the whole file, or
// as many of a .safetensors or GGUF file's first bytes as its header takes); file_sizes the whole
// files'.
// A range past a head throws, naming it.
std::vector<CheckpointFile> describe_checkpoint_files(
    const std::vector<std::span<const std::uint8_t>>& heads,
    const std::vector<std::uint64_t>& file_sizes);

}  // namespace attn
