// pytorch_model.bin (torch.save's zip format, torch >= 1.6) as tensor sources: each state dict
// tensor's dtype, shape and strides, the byte span of the zip entry holding its storage, and the
// functions turning that entry's bytes into the tensor's values. Nothing here holds a whole file:
// the caller reads the tail, the central directory, data.pkl and one storage entry at a time.
//
// Archive layout: <archive>/data.pkl (the pickled state dict, read by pickle::read_state_dict),
// <archive>/data/<key> (each storage's raw little-endian elements), <archive>/version, ... where
// <archive> is the folder of the zip's first entry (torch names it after the file: "pytorch_model",
// or "archive" when saved to a buffer).
//
// The streamed steps (zip.hpp has the first three):
//   tail → zip::locate_directory → directory bytes → zip::parse_directory →
//   pickle_entry's span → zip::data_start → describe(directory, data.pkl) (and, when the file has
//   one, byteorder_entry's span, which follows data.pkl's → check_byteorder) → for each storage its
//   span (StorageSource) → zip::data_start → gather_f32 / gather_raw, or for a contiguous tensor
//   read in pieces, convert_to_f32 on each piece of [byte_begin, byte_end).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attention/io/pickle.hpp"
#include "attention/io/safetensors.hpp"
#include "attention/io/zip.hpp"

namespace attn::torch_checkpoint {

struct Limits {
  zip::Limits zip;
  pickle::Limits pickle;
};

// Bytes of a file's start check_magic looks at.
inline constexpr std::size_t kMagicBytes = 16;
// `first`: the file's first kMagicBytes bytes (fewer when the file is shorter). Returns when they
// begin a zip archive; throws for the legacy format (torch.save before 1.6, or with
// _use_new_zipfile_serialization=False), naming it and what to do, and for anything else.
// A streamed load that cannot locate the zip's directory asks this for the better message.
void check_magic(std::span<const std::uint8_t> first);

// A storage: its zip entry and the span to read for it.
struct StorageSource {
  std::string key;
  pickle::DType dtype = pickle::DType::F32;
  std::uint64_t elements = 0;
  std::uint64_t byte_size = 0;   // elements × dtype size: its entry's data size
  std::size_t entry = 0;         // index into the directory's entries
  std::uint64_t span_begin = 0;  // absolute: its entry's span (local header, data, descriptor)
  std::uint64_t span_end = 0;
};

// A state dict tensor: a strided view of one storage.
struct TensorSource {
  std::string name;
  pickle::DType dtype = pickle::DType::F32;
  std::vector<std::uint64_t> shape;
  std::vector<std::uint64_t> strides;  // elements
  std::uint64_t storage_offset = 0;    // elements
  std::uint64_t element_count = 0;
  std::size_t storage = 0;  // index into Checkpoint::storages
  bool contiguous = true;   // row-major without gaps: [byte_begin, byte_end) is its values in order
  // The bytes of its storage's data its values lie in (from the data's first byte).
  std::uint64_t byte_begin = 0;
  std::uint64_t byte_end = 0;

  std::uint64_t value_bytes() const { return element_count * pickle::dtype_size(dtype); }
};

struct Checkpoint {
  std::string archive;                // the zip's top folder
  std::vector<TensorSource> tensors;  // in the state dict's order
  std::vector<StorageSource> storages;
};

// The entry holding data.pkl (<archive>/data.pkl). Throws when the zip has none (naming a
// TorchScript archive as such) or its entries are not in one folder.
const zip::Entry& pickle_entry(const zip::Directory& directory);

// The <archive>/byteorder entry torch >= 2.1 writes right after data.pkl ("little" or "big"),
// nullptr when the file has none (older torch: little-endian). check_byteorder refuses a
// big-endian checkpoint (its values would be read byte-swapped) and anything unknown.
const zip::Entry* byteorder_entry(const zip::Directory& directory);
void check_byteorder(std::span<const std::uint8_t> byteorder);

// The state dict in `pickle` (data.pkl's data, its entry's whole size) checked against the
// directory: every storage has its entry <archive>/data/<key>, of exactly its byte size.
Checkpoint describe(const zip::Directory& directory, std::span<const std::uint8_t> pickle,
                    const pickle::Limits& limits = {});

// The tensor's values in row-major order from its storage's data: `data` holds the storage's
// data bytes from byte `data_begin` on (0 and the whole entry's data, or any window covering
// [byte_begin, byte_end)). Non-contiguous strides are gathered.
// gather_raw: the values' little-endian bytes as stored (e.g. F16/BF16 kept 2-byte), out of
// value_bytes(). gather_f32: F32, F64, F16 or BF16 values as float (as
// safetensors::convert_to_f32 converts them), out of element_count; other dtypes throw.
void gather_raw(const TensorSource& tensor, std::span<const std::uint8_t> data,
                std::uint64_t data_begin, std::span<std::uint8_t> out);
void gather_f32(const TensorSource& tensor, std::span<const std::uint8_t> data,
                std::uint64_t data_begin, std::span<float> out);

// A piece of a contiguous tensor's bytes (whole values) to floats, as gather_f32 converts them.
void convert_to_f32(pickle::DType dtype, std::span<const std::uint8_t> bytes, std::span<float> out);
// The safetensors dtype of the same bytes (F32, F64, F16, BF16, U8, BOOL); none for I64 and I32.
std::optional<safetensors::DType> safetensors_dtype(pickle::DType dtype);

// A whole file in memory (tests, the fuzz target), read through the same steps; parse also checks
// the byteorder entry and every storage's local header (as a streamed load does when it reads
// each span). A view: `file` must outlive it.
class FileView {
 public:
  static FileView parse(std::span<const std::uint8_t> file, const Limits& limits = {});

  const Checkpoint& checkpoint() const { return checkpoint_; }
  const zip::Directory& directory() const { return directory_; }
  const TensorSource& tensor(const std::string& name) const;  // throws if missing
  // A storage's data (its entry's data, local header checked).
  std::span<const std::uint8_t> storage_data(std::size_t storage) const;
  std::vector<float> f32(const TensorSource& tensor) const;
  std::vector<std::uint8_t> raw(const TensorSource& tensor) const;

 private:
  std::span<const std::uint8_t> file_;
  zip::Directory directory_;
  Checkpoint checkpoint_;
};

}  // namespace attn::torch_checkpoint
