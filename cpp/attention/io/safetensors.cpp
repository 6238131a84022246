// Bounded .safetensors reader and writer: a strict JSON header parser plus range-checked tensors.
#include "attention/io/safetensors.hpp"

#include "attention/ops/half.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <variant>

#include "attention/error.hpp"
#include "attention/io/json.hpp"
#include "attention/message_text.hpp"
#include "attention/table_row.hpp"
#include "attention/utf8.hpp"

namespace attn::safetensors {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this build assumes a little-endian host");

namespace {

constexpr std::size_t kLengthFieldBytes = 8;
constexpr std::size_t kMaxNameInMessage = 80;
constexpr const char* kMetadataKey = "__metadata__";
constexpr const char* kSupportedDTypes = "F32, F64, U8, BOOL, F16, BF16";

// Every dtype read and written: its name in the header and its bytes per value.
struct DTypeInfo {
  DType dtype;
  const char* name;
  std::size_t size;
};
constexpr DTypeInfo kDTypes[] = {{DType::F32, "F32", 4}, {DType::F64, "F64", 8},
                                 {DType::U8, "U8", 1},   {DType::Bool, "BOOL", 1},
                                 {DType::F16, "F16", 2}, {DType::BF16, "BF16", 2}};

[[noreturn]] void fail(const std::string& what) {
  throw Error("safetensors: " + what);
}

// 'name', cut short (at a UTF-8 boundary) so a huge name cannot flood an error message.
std::string quoted(std::string_view name) {
  if (name.size() <= kMaxNameInMessage) return "'" + std::string(name) + "'";
  std::size_t cut = kMaxNameInMessage;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
  return "'" + std::string(name.substr(0, cut)) + "...'";
}

std::string tensor_label(std::string_view name) {
  return "tensor " + quoted(name);
}

// ---- UTF-8 -----------------------------------------------------------------------------------

bool is_valid_utf8(std::string_view text) {
  return first_invalid_utf8(text) == std::string_view::npos;
}

void check_header_utf8(std::string_view header) {
  const std::size_t bad = first_invalid_utf8(header);
  if (bad != std::string_view::npos) {
    fail("header is not valid UTF-8 (at header byte " + std::to_string(bad) + ")");
  }
}

// ---- header interpretation ---------------------------------------------------------------------

struct Header {
  std::vector<TensorInfo> tensors;
  std::map<std::string, std::string> metadata;
};

// A non-negative integer no larger than 2^53 (and size_t), or an error naming `what`.
std::size_t as_index(const json::Value& value, const std::string& what) {
  const auto* number = std::get_if<json::Number>(&value.data);
  if (number == nullptr)
    fail(what + " must be a non-negative integer, found " + json::kind_name(value));
  const std::string& text = number->text;
  if (!number->integral) fail(what + " must be an integer, found " + text);
  if (number->negative && number->magnitude != 0) fail(what + " is negative (" + text + ")");
  if (!number->exact || number->magnitude > std::numeric_limits<std::size_t>::max()) {
    fail(what + " is too large (" + text + ")");
  }
  return static_cast<std::size_t>(number->magnitude);
}

// The entry's member named `key`, nullptr if absent; throws if it appears twice.
const json::Value* find_field(const json::Object& entry, std::string_view key,
                              const std::string& label) {
  const json::Value* found = nullptr;
  for (const json::Member& member : entry) {
    if (member.key != key) continue;
    if (found != nullptr) fail(label + " has a duplicate '" + std::string(key) + "' key");
    found = &member.value;
  }
  return found;
}

const json::Value& require_field(const json::Object& entry, std::string_view key,
                                 const std::string& label) {
  const json::Value* value = find_field(entry, key, label);
  if (value == nullptr) fail(label + " has no " + std::string(key));
  return *value;
}

DType parse_dtype(const json::Value& value, const std::string& label) {
  const auto* text = std::get_if<std::string>(&value.data);
  if (text == nullptr) fail(label + " dtype must be a string, found " + json::kind_name(value));
  if (const DTypeInfo* info = find_row(kDTypes, &DTypeInfo::name, *text)) return info->dtype;
  fail(label + " has unsupported dtype " + quoted(*text) + " (supported: " + kSupportedDTypes +
       ")");
}

std::vector<std::size_t> parse_shape(const json::Value& value, const std::string& label,
                                     const Limits& limits) {
  const auto* entries = std::get_if<json::Array>(&value.data);
  if (entries == nullptr) fail(label + " shape must be an array, found " + json::kind_name(value));
  if (entries->size() > limits.max_rank) {
    fail(label + " has rank " + std::to_string(entries->size()) + ", more than the limit of " +
         std::to_string(limits.max_rank));
  }
  std::vector<std::size_t> shape;
  for (std::size_t i = 0; i < entries->size(); ++i) {
    shape.push_back(as_index((*entries)[i], label + " shape entry " + std::to_string(i)));
  }
  return shape;
}

// product(shape) * element_size, or nothing if it does not fit in size_t.
std::optional<std::size_t> checked_byte_count(const std::vector<std::size_t>& shape,
                                              std::size_t element_size) {
  if (std::find(shape.begin(), shape.end(), std::size_t{0}) != shape.end()) return 0;
  std::size_t total = element_size;
  for (const std::size_t dim : shape) {
    if (total > std::numeric_limits<std::size_t>::max() / dim) return std::nullopt;
    total *= dim;
  }
  return total;
}

// "(192 F32 values = 768 bytes)"
std::string size_text(std::size_t bytes, DType dtype) {
  const std::string values = std::string(dtype_name(dtype)) + " value";
  std::string text = "(";
  text += count_text(bytes / dtype_size(dtype), values);
  text += " = " + count_text(bytes, "byte") + ")";
  return text;
}

std::size_t shape_byte_count(const TensorInfo& tensor, const std::string& label,
                             std::size_t limit) {
  const auto bytes = checked_byte_count(tensor.shape, dtype_size(tensor.dtype));
  if (!bytes) fail(label + " has shape " + shape_text(tensor.shape) + " whose size overflows");
  if (*bytes > limit) {
    fail(label + " has shape " + shape_text(tensor.shape) + " " + size_text(*bytes, tensor.dtype) +
         ", more than the limit of " + count_text(limit, "byte"));
  }
  return *bytes;
}

void parse_data_offsets(const json::Value& value, const std::string& label, std::size_t data_size,
                        TensorInfo& tensor) {
  const auto* pair = std::get_if<json::Array>(&value.data);
  if (pair == nullptr || pair->size() != 2) {
    fail(label + " data_offsets must be an array of two integers [begin, end]");
  }
  tensor.begin = as_index((*pair)[0], label + " data_offsets begin");
  tensor.end = as_index((*pair)[1], label + " data_offsets end");
  const std::string range =
      "[" + std::to_string(tensor.begin) + ", " + std::to_string(tensor.end) + "]";
  if (tensor.begin > tensor.end) fail(label + " has data_offsets " + range + " with begin > end");
  if (tensor.end > data_size) {
    fail(label + " has data_offsets " + range + " past the end of the data buffer (" +
         count_text(data_size, "byte") + ")");
  }
}

TensorInfo parse_tensor(const std::string& name, const json::Value& value, std::size_t data_size,
                        const Limits& limits) {
  const std::string label = tensor_label(name);
  const auto* entry = std::get_if<json::Object>(&value.data);
  if (entry == nullptr) {
    fail(label + " must be an object with dtype, shape and data_offsets, found " +
         json::kind_name(value));
  }
  TensorInfo tensor;
  tensor.name = name;
  tensor.dtype = parse_dtype(require_field(*entry, "dtype", label), label);
  tensor.shape = parse_shape(require_field(*entry, "shape", label), label, limits);
  const std::size_t bytes = shape_byte_count(tensor, label, limits.max_total_bytes);
  parse_data_offsets(require_field(*entry, "data_offsets", label), label, data_size, tensor);
  if (tensor.end - tensor.begin != bytes) {
    fail(label + " has shape " + shape_text(tensor.shape) + " " + size_text(bytes, tensor.dtype) +
         " but data_offsets span " + count_text(tensor.end - tensor.begin, "byte"));
  }
  return tensor;
}

std::map<std::string, std::string> parse_metadata(const json::Value& value) {
  const auto* entries = std::get_if<json::Object>(&value.data);
  if (entries == nullptr) {
    fail(std::string(kMetadataKey) + " must be an object of strings, found " +
         json::kind_name(value));
  }
  std::map<std::string, std::string> metadata;
  for (const json::Member& member : *entries) {
    const auto* text = std::get_if<std::string>(&member.value.data);
    if (text == nullptr) {
      fail(std::string(kMetadataKey) + " value for key " + quoted(member.key) +
           " must be a string, found " + json::kind_name(member.value));
    }
    if (!metadata.emplace(member.key, *text).second) {
      fail(std::string(kMetadataKey) + " has a duplicate key " + quoted(member.key));
    }
  }
  return metadata;
}

void check_no_overlap(const std::vector<TensorInfo>& tensors) {
  std::vector<const TensorInfo*> ranges;  // empty ranges overlap nothing
  for (const TensorInfo& tensor : tensors) {
    if (tensor.begin < tensor.end) ranges.push_back(&tensor);
  }
  // Stable: tensors that begin at the same offset are named in header order on every platform.
  std::stable_sort(ranges.begin(), ranges.end(),
                   [](const TensorInfo* a, const TensorInfo* b) { return a->begin < b->begin; });
  for (std::size_t i = 1; i < ranges.size(); ++i) {
    const TensorInfo& before = *ranges[i - 1];
    const TensorInfo& after = *ranges[i];
    if (after.begin < before.end) {
      fail("tensors " + quoted(before.name) + " [" + std::to_string(before.begin) + ", " +
           std::to_string(before.end) + "] and " + quoted(after.name) + " [" +
           std::to_string(after.begin) + ", " + std::to_string(after.end) + "] overlap");
    }
  }
}

Header interpret_header(const json::Value& root, std::size_t data_size, const Limits& limits) {
  const auto* members = std::get_if<json::Object>(&root.data);
  if (members == nullptr)
    fail(std::string("header must be a JSON object, found ") + json::kind_name(root));
  Header header;
  std::set<std::string_view> seen;
  for (const json::Member& member : *members) {
    if (!seen.insert(member.key).second) {
      fail(member.key == kMetadataKey ? "header has more than one __metadata__"
                                      : "duplicate tensor name " + quoted(member.key));
    }
    if (member.key == kMetadataKey) {
      header.metadata = parse_metadata(member.value);
      continue;
    }
    if (header.tensors.size() == limits.max_tensors) {
      fail("header lists more than " + count_text(limits.max_tensors, "tensor") + " (the limit)");
    }
    header.tensors.push_back(parse_tensor(member.key, member.value, data_size, limits));
    if (member.key.size() > limits.max_name_bytes) {  // names are echoed in later messages
      fail(tensor_label(member.key) + " has a name of " + count_text(member.key.size(), "byte") +
           ", more than the limit of " + count_text(limits.max_name_bytes, "byte"));
    }
  }
  check_no_overlap(header.tensors);
  return header;
}

// ---- file layout ------------------------------------------------------------------------------

std::size_t read_header_length(std::span<const std::uint8_t> bytes, std::uint64_t file_size,
                               const Limits& limits) {
  if (file_size < kLengthFieldBytes || bytes.size() < kLengthFieldBytes) {
    fail("file is " + count_text(file_size, "byte") +
         " long, too short for the 8-byte header length");
  }
  std::uint64_t length = 0;
  for (std::size_t i = 0; i < kLengthFieldBytes; ++i) {
    length |= std::uint64_t{bytes[i]} << (8 * i);
  }
  const std::uint64_t available = file_size - kLengthFieldBytes;
  if (length > available) {
    fail("header length says " + count_text(length, "byte") + " but the file has only " +
         std::to_string(available) + " after the length field");
  }
  if (length > limits.max_header_bytes) {
    fail("header length " + count_text(length, "byte") + " is more than the limit of " +
         count_text(limits.max_header_bytes, "byte"));
  }
  return static_cast<std::size_t>(length);
}

template <typename T>
std::vector<T> copy_values(const std::vector<std::uint8_t>& data, const TensorInfo& tensor) {
  std::vector<T> values((tensor.end - tensor.begin) / sizeof(T));
  if (!values.empty()) {
    std::memcpy(values.data(), data.data() + tensor.begin, values.size() * sizeof(T));
  }
  return values;
}

template <typename T>
std::vector<std::uint8_t> to_bytes(std::span<const T> values) {
  std::vector<std::uint8_t> bytes(values.size_bytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// ---- writer -----------------------------------------------------------------------------------

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out += kHex[static_cast<unsigned char>(c) >> 4];
          out += kHex[static_cast<unsigned char>(c) & 0xF];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void check_writable_text(std::string_view text, const std::string& what) {
  if (!is_valid_utf8(text)) fail(what + " is not valid UTF-8");
}

void check_writable(const std::vector<TensorToWrite>& tensors,
                    const std::map<std::string, std::string>& metadata) {
  std::set<std::string_view> names;
  for (const TensorToWrite& tensor : tensors) {
    const std::string label = tensor_label(tensor.name);
    check_writable_text(tensor.name, "a tensor name");
    if (tensor.name == kMetadataKey) fail("a tensor cannot be named __metadata__");
    if (!names.insert(tensor.name).second) fail("duplicate tensor name " + quoted(tensor.name));
    const auto bytes = checked_byte_count(tensor.shape, dtype_size(tensor.dtype));
    if (!bytes) fail(label + " has shape " + shape_text(tensor.shape) + " whose size overflows");
    if (*bytes != tensor.bytes.size()) {
      fail(label + " has shape " + shape_text(tensor.shape) + " " +
           size_text(*bytes, tensor.dtype) + " but " + count_text(tensor.bytes.size(), "byte") +
           " were given");
    }
  }
  for (const auto& [key, value] : metadata) {
    check_writable_text(key, "a metadata key");
    check_writable_text(value, "metadata value for key " + quoted(key));
  }
}

std::string metadata_json(const std::map<std::string, std::string>& metadata) {
  std::string out = "{";
  for (const auto& [key, value] : metadata) {
    if (out.size() > 1) out += ',';
    append_json_string(out, key);
    out += ':';
    append_json_string(out, value);
  }
  return out + "}";
}

std::string tensor_json(const TensorToWrite& tensor, std::size_t begin) {
  std::string out = "{\"dtype\":\"" + std::string(dtype_name(tensor.dtype)) + "\",\"shape\":[";
  for (std::size_t i = 0; i < tensor.shape.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(tensor.shape[i]);
  }
  out += "],\"data_offsets\":[" + std::to_string(begin) + "," +
         std::to_string(begin + tensor.bytes.size()) + "]}";
  return out;
}

std::string header_json(const std::vector<TensorToWrite>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  std::string out = "{";
  if (!metadata.empty()) {
    append_json_string(out, kMetadataKey);
    out += ':' + metadata_json(metadata);
  }
  std::size_t offset = 0;
  for (const TensorToWrite& tensor : tensors) {
    if (out.size() > 1) out += ',';
    append_json_string(out, tensor.name);
    out += ':' + tensor_json(tensor, offset);
    offset += tensor.bytes.size();
  }
  out += '}';
  out.append((8 - out.size() % 8) % 8, ' ');
  return out;
}

void check_value_count(const std::string& name, const std::vector<std::size_t>& shape,
                       std::size_t count) {
  const auto expected = checked_byte_count(shape, 1);
  if (!expected || *expected != count) {
    fail(tensor_label(name) + " has shape " + shape_text(shape) + " but " +
         count_text(count, "value") + " were given");
  }
}

const TensorInfo& typed_info(const File& file, const std::string& name, DType expected) {
  const TensorInfo& tensor = file.info(name);
  if (tensor.dtype != expected) {
    fail(tensor_label(name) + " is " + dtype_name(tensor.dtype) + ", expected " +
         dtype_name(expected));
  }
  return tensor;
}

}  // namespace

// ---- public API -------------------------------------------------------------------------------

const char* dtype_name(DType dtype) {
  const DTypeInfo* info = find_row(kDTypes, &DTypeInfo::dtype, dtype);
  return info != nullptr ? info->name : "unknown";
}

std::size_t dtype_size(DType dtype) {
  const DTypeInfo* info = find_row(kDTypes, &DTypeInfo::dtype, dtype);
  if (info == nullptr) fail("unknown dtype value " + std::to_string(static_cast<int>(dtype)));
  return info->size;
}

std::size_t TensorInfo::element_count() const {
  std::size_t count = 1;
  for (const std::size_t dim : shape) count *= dim;
  return count;
}

std::size_t header_length(std::span<const std::uint8_t> head, std::uint64_t file_size,
                          const Limits& limits) {
  return read_header_length(head, file_size, limits);
}

std::uint64_t head_bytes_needed(std::span<const std::uint8_t> first, std::uint64_t file_size,
                                const Limits& limits) {
  if (first.size() < kLengthFieldBytes) return std::min<std::uint64_t>(file_size, first.size());
  std::uint64_t length = 0;
  for (std::size_t i = kLengthFieldBytes; i-- > 0;) length = (length << 8) | first[i];
  const std::uint64_t header = std::min<std::uint64_t>(length, limits.max_header_bytes + 1);
  return std::min<std::uint64_t>(file_size, kLengthFieldBytes + header);
}

Index parse_index(std::span<const std::uint8_t> head, std::uint64_t file_size,
                  const Limits& limits) {
  if (file_size > limits.max_total_bytes) {
    fail("file is " + count_text(file_size, "byte") + " long, more than the limit of " +
         count_text(limits.max_total_bytes, "byte"));
  }
  const std::size_t header_size = read_header_length(head, file_size, limits);
  if (head.size() < kLengthFieldBytes + header_size) {
    fail("the header needs the first " + count_text(kLengthFieldBytes + header_size, "byte") +
         ", only " + std::to_string(head.size()) + " were given");
  }
  const std::string_view header(reinterpret_cast<const char*>(head.data()) + kLengthFieldBytes,
                                header_size);
  check_header_utf8(header);
  const json::Value root = json::parse(header, {"safetensors: invalid JSON header", "header"});
  const std::size_t data_size =
      static_cast<std::size_t>(file_size - kLengthFieldBytes - header_size);
  Header parsed = interpret_header(root, data_size, limits);
  return Index{std::move(parsed.tensors), std::move(parsed.metadata),
               kLengthFieldBytes + header_size};
}

File File::parse(std::span<const std::uint8_t> bytes, const Limits& limits) {
  Index index = parse_index(bytes, bytes.size(), limits);
  File file;
  file.tensors_ = std::move(index.tensors);
  file.metadata_ = std::move(index.metadata);
  const auto data = bytes.subspan(index.data_offset);
  file.data_.assign(data.begin(), data.end());
  return file;
}

void convert_to_f32(DType dtype, std::span<const std::uint8_t> bytes, std::span<float> out) {
  if (dtype == DType::U8 || dtype == DType::Bool) {
    fail(std::string("a ") + dtype_name(dtype) +
         " tensor is not floating point (expected F32, F16 or BF16)");
  }
  const std::size_t size = dtype_size(dtype);
  if (bytes.size() != out.size() * size) {
    fail(count_text(bytes.size(), "byte") + " of " + dtype_name(dtype) + " cannot fill " +
         count_text(out.size(), "value"));
  }
  const std::uint8_t* in = bytes.data();
  for (std::size_t i = 0; i < out.size(); ++i, in += size) {
    switch (dtype) {
      case DType::F32:
        std::memcpy(&out[i], in, 4);
        break;
      case DType::F64: {
        double value = 0;
        std::memcpy(&value, in, 8);
        out[i] = static_cast<float>(value);
        break;
      }
      case DType::F16:
        out[i] = f16_to_f32(std::uint16_t(in[0] | (in[1] << 8)));
        break;
      case DType::BF16:
        out[i] = bf16_to_f32(std::uint16_t(in[0] | (in[1] << 8)));
        break;
      case DType::U8:
      case DType::Bool:
        break;
    }
  }
}

bool File::contains(const std::string& name) const {
  return std::any_of(tensors_.begin(), tensors_.end(),
                     [&](const TensorInfo& tensor) { return tensor.name == name; });
}

const TensorInfo& File::info(const std::string& name) const {
  for (const TensorInfo& tensor : tensors_) {
    if (tensor.name == name) return tensor;
  }
  std::string names;
  for (std::size_t i = 0; i < tensors_.size() && i < 16; ++i) {
    names += (i > 0 ? ", " : "") + quoted(tensors_[i].name);
  }
  if (tensors_.size() > 16) names += ", ...";
  fail("no tensor named " + quoted(name) +
       (tensors_.empty() ? " (the file has no tensors)" : " (the file has " + names + ")"));
}

std::vector<float> File::f32(const std::string& name) const {
  return copy_values<float>(data_, typed_info(*this, name, DType::F32));
}

std::vector<double> File::f64(const std::string& name) const {
  return copy_values<double>(data_, typed_info(*this, name, DType::F64));
}

std::vector<std::uint8_t> File::u8(const std::string& name) const {
  return copy_values<std::uint8_t>(data_, typed_info(*this, name, DType::U8));
}

std::vector<std::uint8_t> File::bools(const std::string& name) const {
  return copy_values<std::uint8_t>(data_, typed_info(*this, name, DType::Bool));
}

std::vector<float> File::as_f32(const std::string& name) const {
  const TensorInfo& tensor = info(name);
  std::vector<float> values(tensor.element_count());
  convert_to_f32(tensor.dtype, raw(tensor), values);
  return values;
}

std::span<const std::uint8_t> File::raw(const TensorInfo& tensor) const {
  return std::span<const std::uint8_t>(data_).subspan(tensor.begin, tensor.end - tensor.begin);
}

TensorToWrite make_f32(std::string name, std::vector<std::size_t> shape,
                       std::span<const float> values) {
  check_value_count(name, shape, values.size());
  return TensorToWrite{std::move(name), DType::F32, std::move(shape), to_bytes(values)};
}

TensorToWrite make_u8(std::string name, std::vector<std::size_t> shape,
                      std::span<const std::uint8_t> values) {
  check_value_count(name, shape, values.size());
  return TensorToWrite{std::move(name), DType::U8, std::move(shape), to_bytes(values)};
}

std::vector<std::uint8_t> write(const std::vector<TensorToWrite>& tensors,
                                const std::map<std::string, std::string>& metadata) {
  check_writable(tensors, metadata);
  const std::string header = header_json(tensors, metadata);
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < kLengthFieldBytes; ++i) {
    out.push_back(static_cast<std::uint8_t>(std::uint64_t{header.size()} >> (8 * i)));
  }
  out.insert(out.end(), header.begin(), header.end());
  for (const TensorToWrite& tensor : tensors) {
    out.insert(out.end(), tensor.bytes.begin(), tensor.bytes.end());
  }
  return out;
}

}  // namespace attn::safetensors
