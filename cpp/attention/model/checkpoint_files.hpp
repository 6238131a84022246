// A checkpoint's files told apart by their first bytes (.safetensors, or pytorch_model.bin in
// torch.save's zip format; the legacy pickle format refused by name) and described step by step:
// the byte ranges each file must give before its tensors are known (the safetensors header; the
// zip's end records, central directory and data.pkl), none of them a whole file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attention/io/safetensors.hpp"
#include "attention/io/torch_checkpoint.hpp"
#include "attention/io/zip.hpp"

namespace attn {

enum class CheckpointFormat { Safetensors, TorchZip };

// One tensor of a checkpoint file, as the import reads it.
struct StoredTensor {
  std::string name;
  std::optional<safetensors::DType> dtype;  // none: an integer type (I64, I32) of a .bin
  std::string dtype_name;                   // "F32", "BF16", "I64", …
  std::vector<std::size_t> shape;
  // The absolute bytes to read for it: .safetensors its values; pytorch_model.bin its storage's
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
  std::vector<StoredTensor> tensors;  // in the file's order
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
  enum class Step { First, SafetensorsHead, ZipTail, ZipDirectory, ZipPickle, Done };
  struct State {
    Step step = Step::First;
    zip::Directory directory;
  };
  void advance(std::size_t file, const std::vector<std::span<const std::uint8_t>>& bytes);
  void describe_zip(std::size_t file, std::span<const std::uint8_t> pickle_span,
                    std::span<const std::uint8_t> byteorder_span);

  std::vector<CheckpointFile> files_;
  std::vector<State> states_;
  std::vector<ByteRange> needed_;
};

// Every file described from bytes in memory: `heads` each file's first bytes (the whole file, or
// as many of a .safetensors file's first bytes as its header takes); file_sizes the whole files'.
// A range past a head throws, naming it.
std::vector<CheckpointFile> describe_checkpoint_files(
    const std::vector<std::span<const std::uint8_t>>& heads,
    const std::vector<std::uint64_t>& file_sizes);

}  // namespace attn
