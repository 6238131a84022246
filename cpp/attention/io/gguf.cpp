// The bounded GGUF header reader: a cursor over a prefix of the file that checks every length
// against the limits and the file before it reads or allocates, see gguf.hpp.
#include "attention/io/gguf.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

#include "attention/error.hpp"
#include "attention/message_text.hpp"
#include "attention/ops/dequantize.hpp"

namespace attn::gguf {

static_assert(std::endian::native == std::endian::little,
              "GGUF data is little-endian; this build assumes a little-endian host");

namespace {

constexpr std::uint32_t kOldestVersion = 2;  // version 1 had 32-bit counts and lengths
constexpr std::uint32_t kNewestVersion = 3;
constexpr std::uint64_t kDefaultAlignment = 32;
constexpr const char* kAlignmentKey = "general.alignment";
constexpr std::uint32_t kValueTypeCount = 13;

[[noreturn]] void fail(const std::string& what) {
  throw Error("GGUF: " + what);
}

// Thrown (and caught in parse_head) when the prefix ends before the header does: the prefix
// length that lets the parse go past the point where it stopped.
struct NeedMore {
  std::uint64_t at_least;
};

std::size_t scalar_size(ValueType type) {
  switch (type) {
    case ValueType::U8:
    case ValueType::I8:
    case ValueType::Bool:
      return 1;
    case ValueType::U16:
    case ValueType::I16:
      return 2;
    case ValueType::U32:
    case ValueType::I32:
    case ValueType::F32:
      return 4;
    case ValueType::U64:
    case ValueType::I64:
    case ValueType::F64:
      return 8;
    case ValueType::String:
    case ValueType::Array:
      return 0;
  }
  return 0;
}

// An array's elements: "u32", "strings", "arrays".
std::string element_text(ValueType element) {
  std::string text = value_type_name(element);
  if (element == ValueType::String || element == ValueType::Array) text += "s";
  return text;
}

bool is_float(ValueType type) {
  return type == ValueType::F32 || type == ValueType::F64;
}

template <class T>
T load(const std::uint8_t* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

// The integer at `bytes` of an integer type, as int64 (nothing when a u64 is past int64's range).
std::optional<std::int64_t> integer_at(ValueType type, const std::uint8_t* bytes) {
  switch (type) {
    case ValueType::U8:
      return bytes[0];
    case ValueType::I8:
      return load<std::int8_t>(bytes);
    case ValueType::U16:
      return load<std::uint16_t>(bytes);
    case ValueType::I16:
      return load<std::int16_t>(bytes);
    case ValueType::U32:
      return load<std::uint32_t>(bytes);
    case ValueType::I32:
      return load<std::int32_t>(bytes);
    case ValueType::I64:
      return load<std::int64_t>(bytes);
    case ValueType::U64: {
      const auto value = load<std::uint64_t>(bytes);
      if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return std::nullopt;
      }
      return static_cast<std::int64_t>(value);
    }
    default:
      return std::nullopt;
  }
}

double float_at(ValueType type, const std::uint8_t* bytes) {
  return type == ValueType::F32 ? load<float>(bytes) : load<double>(bytes);
}

// ---- the cursor ------------------------------------------------------------------------------

class Reader {
 public:
  Reader(std::span<const std::uint8_t> head, std::uint64_t file_size, const Limits& limits)
      : head_(head), file_size_(file_size), limits_(limits) {}

  std::uint64_t position() const { return position_; }

  // Makes sure the next `count` bytes can be read: refused when they run past the file or the
  // header's limit, asked for when past the prefix.
  void need(std::uint64_t count, const std::string& what) {
    if (count > file_size_ - position_) {
      fail(what + " at byte " + std::to_string(position_) + " runs past the end of the file (" +
           count_text(file_size_, "byte") + ")");
    }
    if (position_ + count > limits_.max_header_bytes) {
      fail(what + " at byte " + std::to_string(position_) +
           " would make the header (metadata and tensor infos) longer than the limit of " +
           count_text(limits_.max_header_bytes, "byte"));
    }
    if (position_ + count > head_.size()) throw NeedMore{position_ + count};
  }

  const std::uint8_t* take(std::uint64_t count, const std::string& what) {
    need(count, what);
    const std::uint8_t* bytes = head_.data() + position_;
    position_ += count;
    return bytes;
  }

  std::uint32_t u32(const std::string& what) { return load<std::uint32_t>(take(4, what)); }
  std::uint64_t u64(const std::string& what) { return load<std::uint64_t>(take(8, what)); }

  // A u64 length, then that many bytes.
  std::string string(const std::string& what, std::uint64_t max_bytes) {
    const std::uint64_t length = u64(what + "'s length");
    if (length > max_bytes) {
      fail(what + " at byte " + std::to_string(position_ - 8) + " is " +
           count_text(length, "byte") + " long, more than the limit of " +
           count_text(max_bytes, "byte"));
    }
    const std::uint8_t* bytes = take(length, what + " (" + count_text(length, "byte") + ")");
    return std::string(reinterpret_cast<const char*>(bytes), length);
  }

  // The next string when its length and bytes are in the prefix and within the limits, else
  // nothing, the cursor unmoved (string() then names the problem or asks for more): the fast path
  // of a vocabulary's many strings, which builds no message.
  std::optional<std::string> string_if_present(std::uint64_t max_bytes) {
    if (head_.size() - position_ < 8) return std::nullopt;
    const auto length = load<std::uint64_t>(head_.data() + position_);
    if (length > max_bytes || length > head_.size() - position_ - 8 ||
        position_ + 8 + length > limits_.max_header_bytes) {
      return std::nullopt;
    }
    const char* text = reinterpret_cast<const char*>(head_.data() + position_ + 8);
    position_ += 8 + length;
    return std::string(text, length);
  }

  // Refuses `count` elements of at least `min_bytes` each when the rest of the file cannot hold
  // them: a huge count is refused before anything is allocated for it.
  void check_fits(std::uint64_t count, std::uint64_t min_bytes, const std::string& what) {
    const std::uint64_t left = file_size_ - position_;
    if (min_bytes > 0 && count > left / min_bytes) {
      fail(what + " at byte " + std::to_string(position_) + " cannot fit in the " +
           count_text(left, "byte") + " left in the file");
    }
  }

 private:
  std::span<const std::uint8_t> head_;
  std::uint64_t file_size_;
  const Limits& limits_;
  std::uint64_t position_ = 0;
};

// ---- metadata values ---------------------------------------------------------------------------

class ValueReader {
 public:
  ValueReader(Reader& reader, const Limits& limits) : reader_(reader), limits_(limits) {}

  ValueType value_type(const std::string& what) {
    const std::uint32_t id = reader_.u32(what + "'s value type");
    if (id >= kValueTypeCount) {
      fail(what + " has unknown value type " + std::to_string(id) +
           " (known: 0–12, u8, i8, u16, i16, u32, i32, f32, bool, string, array, u64, i64, f64)");
    }
    return static_cast<ValueType>(id);
  }

  Value value(ValueType type, const std::string& what, std::size_t depth) {
    Value value;
    value.type = type;
    if (type == ValueType::String) {
      count_strings(1, what);
      value.strings.push_back(reader_.string(what + "'s string", limits_.max_string_bytes));
    } else if (type == ValueType::Array) {
      read_array(value, what, depth + 1);
    } else {
      const std::size_t size = scalar_size(type);
      const std::uint8_t* bytes = reader_.take(size, what + "'s " + value_type_name(type));
      value.bytes.assign(bytes, bytes + size);
    }
    return value;
  }

 private:
  void count_strings(std::uint64_t count, const std::string& what) {
    if (count > limits_.max_strings - strings_) {
      fail(what + " brings the header's strings past the limit of " +
           std::to_string(limits_.max_strings));
    }
    strings_ += count;
  }

  void read_array(Value& array, const std::string& what, std::size_t depth) {
    if (depth > limits_.max_array_depth) {
      fail(what + " nests arrays deeper than the limit of " +
           std::to_string(limits_.max_array_depth));
    }
    const ValueType element = value_type(what + "'s array element");
    const std::uint64_t count = reader_.u64(what + "'s array length");
    const std::string label =
        what + "'s array of " + std::to_string(count) + " " + element_text(element);
    if (count > limits_.max_array_length) {
      fail(label + " is longer than the limit of " +
           count_text(limits_.max_array_length, "element"));
    }
    // The fewest bytes an element takes: a scalar its size, a string its length, an array its
    // element type and length.
    const std::uint64_t min_bytes = element == ValueType::String  ? 8
                                    : element == ValueType::Array ? 12
                                                                  : scalar_size(element);
    reader_.check_fits(count, min_bytes, label);
    array.element_type = element;
    array.count = count;
    if (element == ValueType::String) {
      // Nothing reserved for the count: a hostile count costs memory only as its bytes arrive.
      count_strings(count, label);
      for (std::uint64_t i = 0; i < count; ++i) {
        if (auto text = reader_.string_if_present(limits_.max_string_bytes)) {
          array.strings.push_back(std::move(*text));
          continue;
        }
        array.strings.push_back(
            reader_.string(what + "'s string " + std::to_string(i) + " of " + std::to_string(count),
                           limits_.max_string_bytes));
      }
    } else if (element == ValueType::Array) {
      if (count > limits_.max_nested_arrays - nested_arrays_) {
        fail(label + " brings the header's nested arrays past the limit of " +
             std::to_string(limits_.max_nested_arrays));
      }
      nested_arrays_ += count;
      for (std::uint64_t i = 0; i < count; ++i) {
        array.items.push_back(
            value(ValueType::Array, what + "'s array " + std::to_string(i), depth));
      }
    } else {
      const std::uint64_t bytes = count * min_bytes;
      const std::uint8_t* data = reader_.take(bytes, label);
      array.bytes.assign(data, data + bytes);
    }
  }

  Reader& reader_;
  const Limits& limits_;
  std::uint64_t strings_ = 0;
  std::uint64_t nested_arrays_ = 0;
};

// ---- header ------------------------------------------------------------------------------------

std::string metadata_label(const std::string& key) {
  return "metadata key " + quoted_text(key);
}

std::string tensor_label(const std::string& name) {
  return "tensor " + quoted_text(name);
}

std::string dims_text(const std::vector<std::uint64_t>& dims) {
  std::string text = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

void read_magic_and_version(Reader& reader, std::span<const std::uint8_t> head,
                            std::uint64_t file_size, std::uint32_t& version) {
  if (file_size < kMagicBytes) {
    fail("the file has " + count_text(file_size, "byte") + ", too few for a GGUF header");
  }
  const std::uint8_t* magic = reader.take(kMagicBytes, "the magic");
  if (!has_magic(head)) {
    fail("the file does not start with 'GGUF' (its first bytes are " +
         quoted_text(std::string_view(reinterpret_cast<const char*>(magic), kMagicBytes)) + ")");
  }
  version = reader.u32("the version");
  if (version != 0 && (version & 0xFFFF) == 0) {
    fail("version field " + std::to_string(version) +
         " reads as a big-endian file's; only little-endian GGUF files are read");
  }
  if (version < kOldestVersion) {
    fail("version " + std::to_string(version) +
         " is not supported (versions 2 and 3 are; convert the file again with a current "
         "llama.cpp)");
  }
  if (version > kNewestVersion) {
    fail("version " + std::to_string(version) +
         " is newer than this reader, which reads versions 2 and 3");
  }
}

// `what`: the plural noun ("tensors", "metadata keys").
std::uint64_t read_count(Reader& reader, const char* what, std::uint64_t limit) {
  const std::uint64_t count = reader.u64(std::string("the count of ") + what);
  if (count > limit) {
    fail("the header claims " + std::to_string(count) + " " + what + ", more than the limit of " +
         std::to_string(limit));
  }
  return count;
}

std::vector<KeyValue> read_metadata(Reader& reader, std::uint64_t count, const Limits& limits) {
  reader.check_fits(count, 13, "the header's " + std::to_string(count) + " metadata keys");
  ValueReader values(reader, limits);
  std::vector<KeyValue> entries;
  entries.reserve(count);
  std::set<std::string, std::less<>> keys;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::string number = "metadata key " + std::to_string(i);
    std::string key = reader.string(number, limits.max_key_bytes);
    if (key.empty()) fail(number + " is empty");
    const std::string label = metadata_label(key);
    if (!keys.insert(key).second) fail(label + " appears twice");
    const ValueType type = values.value_type(label);
    Value value = values.value(type, label, 0);
    entries.push_back({std::move(key), std::move(value)});
  }
  return entries;
}

// product(dims) and its bytes, each checked for overflow.
void size_tensor(TensorInfo& tensor, const std::string& label) {
  const GgmlTypeInfo& info = ggml_type_info(tensor.type);
  std::uint64_t elements = 1;
  for (const std::uint64_t dim : tensor.dims) {
    if (dim == 0) fail(label + " has a dimension of 0 (dims " + dims_text(tensor.dims) + ")");
    if (elements > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) / dim) {
      fail(label + " has dims " + dims_text(tensor.dims) + " whose product overflows");
    }
    elements *= dim;
  }
  const std::uint64_t row = tensor.dims.empty() ? 1 : tensor.dims[0];
  if (row % info.block_values != 0) {
    fail(label + " has rows of " + std::to_string(row) + " " + info.name +
         " values, not a whole number of its blocks of " + std::to_string(info.block_values));
  }
  const std::uint64_t blocks = elements / info.block_values;
  if (blocks > std::numeric_limits<std::uint64_t>::max() / info.block_bytes) {
    fail(label + " has dims " + dims_text(tensor.dims) + " whose size in bytes overflows");
  }
  tensor.bytes = blocks * info.block_bytes;
}

std::vector<TensorInfo> read_tensor_infos(Reader& reader, std::uint64_t count,
                                          const Limits& limits) {
  reader.check_fits(count, 24, "the header's " + count_text(count, "tensor info"));
  std::vector<TensorInfo> tensors;
  tensors.reserve(count);
  std::set<std::string, std::less<>> names;
  for (std::uint64_t i = 0; i < count; ++i) {
    TensorInfo tensor;
    const std::string number = "tensor " + std::to_string(i) + "'s name";
    tensor.name = reader.string(number, limits.max_key_bytes);
    if (tensor.name.empty()) fail(number + " is empty");
    const std::string label = tensor_label(tensor.name);
    if (!names.insert(tensor.name).second)
      fail("two tensors are named " + quoted_text(tensor.name));
    const std::uint32_t rank = reader.u32(label + "'s rank");
    if (rank > limits.max_rank) {
      fail(label + " has rank " + std::to_string(rank) + ", more than the limit of " +
           std::to_string(limits.max_rank));
    }
    for (std::uint32_t d = 0; d < rank; ++d) {
      tensor.dims.push_back(reader.u64(label + "'s dimension " + std::to_string(d)));
    }
    const std::uint32_t type = reader.u32(label + "'s type");
    const GgmlTypeInfo* info = find_ggml_type(type);
    if (info == nullptr) {
      fail(label + " has unknown ggml type id " + std::to_string(type) +
           " (known: " + known_ggml_type_names() + ")");
    }
    tensor.type = info->type;
    size_tensor(tensor, label);
    tensor.offset = reader.u64(label + "'s offset");
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

std::uint64_t alignment_of(const Metadata& metadata) {
  const Value* value = metadata.find(kAlignmentKey);
  if (value == nullptr) return kDefaultAlignment;
  if (value->type != ValueType::U32) {
    fail(std::string(kAlignmentKey) + " is " + value->type_text() + ", expected u32");
  }
  const std::uint32_t alignment = load<std::uint32_t>(value->bytes.data());
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    fail(std::string(kAlignmentKey) + " is " + std::to_string(alignment) + ", not a power of two");
  }
  return alignment;
}

// Each tensor's absolute range: aligned, inside the file, none overlapping another.
void place_tensors(Index& index) {
  for (TensorInfo& tensor : index.tensors) {
    const std::string label = tensor_label(tensor.name);
    if (tensor.offset % index.alignment != 0) {
      fail(label + " has offset " + std::to_string(tensor.offset) + ", not a multiple of the " +
           "alignment " + std::to_string(index.alignment));
    }
    const std::uint64_t data_size =
        index.file_size > index.data_offset ? index.file_size - index.data_offset : 0;
    if (tensor.offset > data_size || tensor.bytes > data_size - tensor.offset) {
      fail(label + " (" + count_text(tensor.bytes, "byte") + " at offset " +
           std::to_string(tensor.offset) + ") runs past the end of the data section (" +
           count_text(data_size, "byte") + " from byte " + std::to_string(index.data_offset) + ")");
    }
    tensor.begin = index.data_offset + tensor.offset;
    tensor.end = tensor.begin + tensor.bytes;
  }
  std::vector<const TensorInfo*> order;
  for (const TensorInfo& tensor : index.tensors) order.push_back(&tensor);
  std::stable_sort(order.begin(), order.end(),
                   [](const TensorInfo* a, const TensorInfo* b) { return a->begin < b->begin; });
  for (std::size_t i = 1; i < order.size(); ++i) {
    const TensorInfo& before = *order[i - 1];
    const TensorInfo& after = *order[i];
    if (after.begin < before.end) {
      fail("tensors " + quoted_text(before.name) + " (bytes " + std::to_string(before.offset) +
           " to " + std::to_string(before.offset + before.bytes) + ") and " +
           quoted_text(after.name) + " (from " + std::to_string(after.offset) +
           ") overlap in the data section");
    }
  }
}

Index read_header(std::span<const std::uint8_t> head, std::uint64_t file_size,
                  const Limits& limits) {
  Reader reader(head, file_size, limits);
  Index index;
  index.file_size = file_size;
  read_magic_and_version(reader, head, file_size, index.version);
  const std::uint64_t tensors = read_count(reader, "tensors", limits.max_tensors);
  const std::uint64_t keys = read_count(reader, "metadata keys", limits.max_metadata);
  index.metadata = Metadata(read_metadata(reader, keys, limits));
  index.alignment = alignment_of(index.metadata);
  index.tensors = read_tensor_infos(reader, tensors, limits);
  index.header_bytes = reader.position();
  index.data_offset =
      (index.header_bytes + index.alignment - 1) / index.alignment * index.alignment;
  place_tensors(index);
  return index;
}

}  // namespace

bool is_integer(ValueType type) {
  switch (type) {
    case ValueType::U8:
    case ValueType::I8:
    case ValueType::U16:
    case ValueType::I16:
    case ValueType::U32:
    case ValueType::I32:
    case ValueType::U64:
    case ValueType::I64:
      return true;
    default:
      return false;
  }
}

const char* value_type_name(ValueType type) {
  static constexpr const char* kNames[kValueTypeCount] = {"u8",  "i8",  "u16",  "i16",    "u32",
                                                          "i32", "f32", "bool", "string", "array",
                                                          "u64", "i64", "f64"};
  const auto id = static_cast<std::uint32_t>(type);
  return id < kValueTypeCount ? kNames[id] : "unknown";
}

std::string Value::type_text() const {
  if (type != ValueType::Array) return value_type_name(type);
  return "array of " + std::to_string(count) + " " + element_text(element_type);
}

// ---- Metadata ----------------------------------------------------------------------------------

Metadata::Metadata(std::vector<KeyValue> entries) : entries_(std::move(entries)) {
  for (std::size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].key, i);
}

const Value* Metadata::find(std::string_view key) const {
  const auto found = index_.find(key);
  return found == index_.end() ? nullptr : &entries_[found->second].value;
}

const Value& Metadata::at(std::string_view key) const {
  const Value* value = find(key);
  if (value == nullptr) fail("the metadata has no key " + quoted_text(key));
  return *value;
}

namespace {

[[noreturn]] void wrong_type(std::string_view key, const Value& value, const char* expected) {
  fail("metadata " + quoted_text(key) + " is " + value.type_text() + ", expected " + expected);
}

}  // namespace

const std::string& Metadata::string(std::string_view key) const {
  const Value& value = at(key);
  if (value.type != ValueType::String) wrong_type(key, value, "a string");
  return value.strings.front();
}

std::int64_t Metadata::integer(std::string_view key) const {
  const Value& value = at(key);
  if (!is_integer(value.type)) wrong_type(key, value, "an integer");
  const auto number = integer_at(value.type, value.bytes.data());
  if (!number) {
    fail("metadata " + quoted_text(key) + " is " +
         std::to_string(load<std::uint64_t>(value.bytes.data())) + ", too large");
  }
  return *number;
}

double Metadata::number(std::string_view key) const {
  const Value& value = at(key);
  if (is_float(value.type)) return float_at(value.type, value.bytes.data());
  if (!is_integer(value.type)) wrong_type(key, value, "a number");
  if (value.type == ValueType::U64) {
    return static_cast<double>(load<std::uint64_t>(value.bytes.data()));
  }
  return static_cast<double>(*integer_at(value.type, value.bytes.data()));
}

bool Metadata::boolean(std::string_view key) const {
  const Value& value = at(key);
  if (value.type != ValueType::Bool) wrong_type(key, value, "a bool");
  return value.bytes.front() != 0;
}

const std::vector<std::string>& Metadata::strings(std::string_view key) const {
  const Value& value = at(key);
  if (value.type != ValueType::Array || value.element_type != ValueType::String) {
    wrong_type(key, value, "an array of strings");
  }
  return value.strings;
}

std::vector<std::int64_t> Metadata::integers(std::string_view key) const {
  const Value& value = at(key);
  if (value.type != ValueType::Array || !is_integer(value.element_type)) {
    wrong_type(key, value, "an array of integers");
  }
  const std::size_t size = scalar_size(value.element_type);
  std::vector<std::int64_t> numbers(value.count);
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    const auto number = integer_at(value.element_type, value.bytes.data() + i * size);
    if (!number) {
      fail("metadata " + quoted_text(key) + " element " + std::to_string(i) + " is too large");
    }
    numbers[i] = *number;
  }
  return numbers;
}

std::vector<float> Metadata::floats(std::string_view key) const {
  const Value& value = at(key);
  if (value.type != ValueType::Array || !is_float(value.element_type)) {
    wrong_type(key, value, "an array of f32 or f64");
  }
  const std::size_t size = scalar_size(value.element_type);
  std::vector<float> numbers(value.count);
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    numbers[i] = static_cast<float>(float_at(value.element_type, value.bytes.data() + i * size));
  }
  return numbers;
}

// ---- tensors and files -------------------------------------------------------------------------

std::uint64_t TensorInfo::element_count() const {
  std::uint64_t count = 1;
  for (const std::uint64_t dim : dims) count *= dim;
  return count;
}

std::vector<std::size_t> TensorInfo::shape() const {
  return std::vector<std::size_t>(dims.rbegin(), dims.rend());
}

const TensorInfo* Index::find(std::string_view name) const {
  for (const TensorInfo& tensor : tensors) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

bool has_magic(std::span<const std::uint8_t> first) {
  return first.size() >= kMagicBytes && std::memcmp(first.data(), "GGUF", kMagicBytes) == 0;
}

HeadResult parse_head(std::span<const std::uint8_t> head, std::uint64_t file_size,
                      const Limits& limits) {
  if (head.size() > file_size) {
    fail("given " + count_text(head.size(), "byte") + " of a file of " +
         count_text(file_size, "byte"));
  }
  try {
    return {read_header(head, file_size, limits), 0};
  } catch (const NeedMore& more) {
    const std::uint64_t doubled =
        std::min({std::uint64_t{2} * head.size(), file_size, limits.max_header_bytes});
    return {std::nullopt, std::max(more.at_least, doubled)};
  }
}

Index parse(std::span<const std::uint8_t> file, const Limits& limits) {
  HeadResult result = parse_head(file, file.size(), limits);
  return std::move(*result.index);  // the whole file: never short
}

std::span<const std::uint8_t> tensor_bytes(const TensorInfo& tensor,
                                           std::span<const std::uint8_t> file) {
  if (tensor.end > file.size() || tensor.begin > tensor.end) {
    fail(tensor_label(tensor.name) + " (bytes " + std::to_string(tensor.begin) + " to " +
         std::to_string(tensor.end) + ") is not inside the " + count_text(file.size(), "byte") +
         " given");
  }
  return file.subspan(tensor.begin, tensor.end - tensor.begin);
}

std::vector<float> tensor_values(const TensorInfo& tensor, std::span<const std::uint8_t> file) {
  const std::span<const std::uint8_t> bytes = tensor_bytes(tensor, file);
  if (!can_dequantize(tensor.type)) {
    fail(tensor_label(tensor.name) + " is " + ggml_type_name(tensor.type) +
         ", whose values cannot be read (supported: " + dequantizable_type_names() + ")");
  }
  std::vector<float> values(tensor.element_count());
  dequantize(tensor.type, bytes, values);
  return values;
}

}  // namespace attn::gguf
