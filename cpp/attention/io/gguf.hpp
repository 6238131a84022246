// A bounded reader of GGUF files (llama.cpp's format, versions 2 and 3, little-endian): the header,
// its typed metadata and the tensor infos, from the file's first bytes alone.
//
// Layout: "GGUF", u32 version, u64 tensor count, u64 metadata count; the key-values (u64-length
// string key, u32 value type, value: a scalar, a u64-length string, or an array — u32 element
// type, u64 count, the elements, arrays nesting); the tensor infos (name, u32 rank, rank u64 dims
// ne[0] first, u32 ggml type, u64 offset); padding to `general.alignment` (u32, default 32); the
// data section, where each tensor's offset (a multiple of the alignment) is counted from.
//
// A real file's metadata carries its whole tokenizer (several MB), so the header is read from a
// prefix of the file: parse_head says how many of the file's first bytes it needs when the prefix
// is too short, and a caller reading by range asks for them. Every count, length, dimension and
// offset is checked before use: a malformed or hostile header throws attn::Error naming the
// problem (and the key or tensor), without allocating what it claims.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attention/ops/ggml_blocks.hpp"

namespace attn::gguf {

// GGUF's metadata value types (gguf_type), with their ids.
enum class ValueType : std::uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};
// "u8", "i32", "f32", "bool", "string", "array", …
const char* value_type_name(ValueType type);
// Whether values of this type are integers (u8 … i64).
bool is_integer(ValueType type);

struct Limits {
  std::uint64_t max_header_bytes = std::uint64_t{64} << 20;  // everything before the data
  std::uint64_t max_tensors = 1u << 16;
  std::uint64_t max_metadata = 1u << 16;       // key-values
  std::uint64_t max_array_length = 1u << 24;   // elements of one array
  std::uint64_t max_strings = 1u << 21;        // strings in all (a 262 k vocabulary and its merges)
  std::uint64_t max_nested_arrays = 1u << 16;  // arrays inside arrays, in all
  std::uint64_t max_string_bytes = 1u << 24;   // one string (a chat template is tens of KB)
  std::uint64_t max_key_bytes = 1024;          // a key or a tensor name
  std::size_t max_array_depth = 8;             // arrays of arrays
  std::size_t max_rank = 4;                    // ggml's GGML_MAX_DIMS
};

// A metadata value. Scalars and arrays of scalars keep their little-endian bytes as stored
// (`bytes`); strings and arrays of strings their text (`strings`); arrays of arrays their items.
struct Value {
  ValueType type = ValueType::U8;
  ValueType element_type = ValueType::U8;  // arrays only
  std::uint64_t count = 1;                 // arrays: the number of elements
  std::vector<std::uint8_t> bytes;
  std::vector<std::string> strings;
  std::vector<Value> items;

  // "u32", "string", "array of 3 f32", "array of 2 arrays"
  std::string type_text() const;
};

struct KeyValue {
  std::string key;
  Value value;
};

// The typed lookups: each throws attn::Error naming the key and both types when the key is
// missing or of another type.
class Metadata {
 public:
  Metadata() = default;
  explicit Metadata(std::vector<KeyValue> entries);  // keys are unique

  const std::vector<KeyValue>& entries() const { return entries_; }  // in file order
  const Value* find(std::string_view key) const;                     // nullptr if missing
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  const Value& at(std::string_view key) const;

  const std::string& string(std::string_view key) const;
  // Any integer type (u8 … u64, i8 … i64); a u64 beyond int64 is refused.
  std::int64_t integer(std::string_view key) const;
  // Any integer or float type.
  double number(std::string_view key) const;
  bool boolean(std::string_view key) const;
  // Arrays: of strings; of any integer type; of f32 or f64 (as float).
  const std::vector<std::string>& strings(std::string_view key) const;
  std::vector<std::int64_t> integers(std::string_view key) const;
  std::vector<float> floats(std::string_view key) const;

 private:
  std::vector<KeyValue> entries_;
  std::map<std::string, std::size_t, std::less<>> index_;
};

struct TensorInfo {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<std::uint64_t> dims;  // as stored: ne[0] (a row's length) first
  std::uint64_t offset = 0;         // in the data section, as stored
  std::uint64_t bytes = 0;          // elements / block_values · block_bytes
  std::uint64_t begin = 0;          // absolute file offsets [begin, end)
  std::uint64_t end = 0;

  std::uint64_t element_count() const;  // product of dims (1 for rank 0)
  // Row-major, as PyTorch writes it: dims reversed ([rows, ne[0]] for a matrix).
  std::vector<std::size_t> shape() const;
};

// The header, checked: what a loader needs before it reads any tensor.
struct Index {
  std::uint32_t version = 3;
  Metadata metadata;
  std::vector<TensorInfo> tensors;  // in file order
  std::uint64_t alignment = 32;     // general.alignment
  std::uint64_t header_bytes = 0;   // magic, counts, key-values and tensor infos
  std::uint64_t data_offset = 0;    // header_bytes rounded up to the alignment
  std::uint64_t file_size = 0;

  const TensorInfo* find(std::string_view name) const;  // nullptr if missing
};

constexpr std::size_t kMagicBytes = 4;  // "GGUF"
// Whether a file's first bytes are GGUF's magic.
bool has_magic(std::span<const std::uint8_t> first);
// A first read that holds the header of most files; parse_head asks for more when it needs it.
constexpr std::uint64_t kFirstHeadBytes = std::uint64_t{1} << 20;

// What parse_head made of a prefix: the header, or how many of the file's first bytes to give it
// next.
struct HeadResult {
  std::optional<Index> index;
  // When index is empty: the prefix length to read next, > head.size() and ≤ the file's size (at
  // least the bytes the parse stopped short of; at least twice head.size() when the file has them,
  // so a header of H bytes takes O(log H) reads).
  std::uint64_t bytes_needed = 0;
};

// The header from `head`, the first head.size() bytes of a file of file_size bytes (a prefix or
// the whole file). Throws attn::Error for anything malformed: bad magic, an unsupported version
// (1, or newer than 3, or a big-endian file), counts, lengths or dimensions past the limits or the
// file, an unknown value or ggml type, duplicate keys or names, a general.alignment that is not a
// u32 power of two, a row not a whole number of blocks, tensor offsets misaligned, overlapping or
// outside the file.
HeadResult parse_head(std::span<const std::uint8_t> head, std::uint64_t file_size,
                      const Limits& limits = {});
// A whole file in memory.
Index parse(std::span<const std::uint8_t> file, const Limits& limits = {});

// The tensor's stored bytes in a whole file (the span parse read).
std::span<const std::uint8_t> tensor_bytes(const TensorInfo& tensor,
                                           std::span<const std::uint8_t> file);
// The tensor's values as float (dequantize's formats; any other type refused by name).
std::vector<float> tensor_values(const TensorInfo& tensor, std::span<const std::uint8_t> file);

}  // namespace attn::gguf
