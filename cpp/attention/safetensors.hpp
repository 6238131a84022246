// A bounded reader and writer for the .safetensors format (F32, F64 and U8 tensors).
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

enum class DType { F32, F64, U8 };

const char* dtype_name(DType dtype);  // "F32", "F64", "U8"
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
