// A bounded reader and writer for the .safetensors format (F32, F64, U8, BOOL, F16 and BF16
// tensors; BOOL, as U8, is read but never converted to float).
//
// Format: 8-byte little-endian header length N, N bytes of UTF-8 JSON
//   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"key": "value", ...}}
// then the data buffer; offsets are relative to the start of the buffer.
// Every length, offset and shape is checked before use: a malformed file throws attn::Error
// with a message naming the problem, it never reads out of bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace attn::safetensors {

enum class DType { F32, F64, U8, F16, BF16, Bool };

const char* dtype_name(DType dtype);  // "F32", "F64", "U8", "F16", "BF16", "BOOL"
std::size_t dtype_size(DType dtype);  // bytes per element

struct Limits {
  std::size_t max_header_bytes = 1u << 20;  // JSON header
  std::size_t max_tensors = 1024;
  std::size_t max_rank = 8;
  std::size_t max_name_bytes = 1024;  // a tensor name (state_dict names are far shorter)
  std::size_t max_total_bytes = std::size_t{1} << 30;  // whole file
};

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::size_t> shape;
  std::size_t begin = 0;  // byte offsets into the data buffer, [begin, end)
  std::size_t end = 0;

  std::size_t element_count() const;  // product of shape (1 for rank 0)
};

// The header alone: what parse() checks, without the data. `head` holds at least the file's
// first 8 + N bytes (N = the header length); file_size is the whole file's size, so the tensors'
// offsets are checked against the data the file will have. Tensor offsets are relative to
// data_offset (= 8 + N) in the file.
struct Index {
  std::vector<TensorInfo> tensors;  // in header order
  std::map<std::string, std::string> metadata;
  std::size_t data_offset = 0;
};
// The header length N from the first 8 bytes of a file of file_size bytes (throws when they
// are missing, N runs past the end, or N is over limits.max_header_bytes).
std::size_t header_length(std::span<const std::uint8_t> head, std::uint64_t file_size,
                          const Limits& limits = {});
Index parse_index(std::span<const std::uint8_t> head, std::uint64_t file_size,
                  const Limits& limits = {});
// How many of a file's first bytes parse_index needs, from its first 8 (or fewer) bytes: 8 + the
// header length, but no more than 8 + limits.max_header_bytes + 1 (enough for parse_index to
// refuse an oversized header) and no more than the file. Never throws: parse_index judges.
std::uint64_t head_bytes_needed(std::span<const std::uint8_t> first, std::uint64_t file_size,
                                const Limits& limits = {});

// Converts `bytes` little-endian values of a floating-point dtype (F32, F64, F16 or BF16) into
// out (exactly bytes / dtype_size values, else attn::Error); F16 and BF16 are exact in float,
// F64 is rounded to nearest.
void convert_to_f32(DType dtype, std::span<const std::uint8_t> bytes, std::span<float> out);

// A parsed file. Holds a copy of the bytes it needs, so the input may go away after parse().
class File {
 public:
  // Throws attn::Error on any malformed input: truncation, a header length past the end,
  // invalid JSON or UTF-8, unknown dtype, shapes whose product overflows or disagrees with the
  // byte range, out-of-range or overlapping offsets, duplicate or too long names, too many
  // tensors.
  static File parse(std::span<const std::uint8_t> bytes, const Limits& limits = {});

  const std::vector<TensorInfo>& tensors() const { return tensors_; }  // in header order
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  bool contains(const std::string& name) const;
  const TensorInfo& info(const std::string& name) const;  // throws if missing

  // Converting readers; throw attn::Error if the tensor is missing or of another dtype.
  std::vector<float> f32(const std::string& name) const;
  std::vector<double> f64(const std::string& name) const;
  std::vector<std::uint8_t> u8(const std::string& name) const;
  // A BOOL tensor (one byte per value, as stored; e.g. the causal-mask buffers of some
  // checkpoints).
  std::vector<std::uint8_t> bools(const std::string& name) const;
  // Any floating-point tensor (F32, F64, F16, BF16) converted to float.
  std::vector<float> as_f32(const std::string& name) const;
  // The tensor's stored bytes, whatever its dtype.
  std::span<const std::uint8_t> raw(const TensorInfo& tensor) const;

 private:
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
  std::vector<std::uint8_t> data_;  // the data buffer (after the header)
};

struct TensorToWrite {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::size_t> shape;
  std::vector<std::uint8_t> bytes;  // little-endian element bytes, product(shape) * dtype_size
};

TensorToWrite make_f32(std::string name, std::vector<std::size_t> shape,
                       std::span<const float> values);
TensorToWrite make_u8(std::string name, std::vector<std::size_t> shape,
                      std::span<const std::uint8_t> values);

// Serializes tensors (in the given order) and optional metadata; the header is padded with
// spaces to a multiple of 8 bytes as the reference implementation does.
std::vector<std::uint8_t> write(const std::vector<TensorToWrite>& tensors,
                                const std::map<std::string, std::string>& metadata = {});

}  // namespace attn::safetensors
