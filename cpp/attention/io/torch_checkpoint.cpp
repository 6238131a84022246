// pytorch_model.bin as tensor sources: the zip's folder and entries, the weights-only state dict,
// and each tensor's values gathered from its storage's bytes.
#include "attention/io/torch_checkpoint.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include "attention/error.hpp"
#include "attention/message_text.hpp"
#include "attention/ops/half.hpp"

namespace attn::torch_checkpoint {

namespace {

// torch/serialization.py's MAGIC_NUMBER (0x1950a86a20f9469cfc6c), pickled first by the legacy
// format with protocol 2: PROTO 2, LONG1 of 10 bytes, little-endian.
constexpr std::uint8_t kLegacyStart[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c,
                                         0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
constexpr std::uint8_t kZipStart[] = {'P', 'K', 0x03, 0x04};
constexpr std::uint8_t kEmptyZipStart[] = {'P', 'K', 0x05, 0x06};

[[noreturn]] void fail(const std::string& what) {
  throw Error("PyTorch checkpoint: " + what);
}

bool starts_with(std::span<const std::uint8_t> bytes, std::span<const std::uint8_t> prefix) {
  return bytes.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), bytes.begin());
}

std::string hex_bytes(std::span<const std::uint8_t> bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < bytes.size() && i < 8; ++i) {
    if (i > 0) out += ' ';
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 0xF];
  }
  return out;
}

std::string archive_of(const zip::Directory& directory) {
  if (directory.entries.empty()) fail("the zip archive has no entries (no data.pkl)");
  const std::string& first = directory.entries.front().name;
  const std::size_t slash = first.find('/');
  if (slash == std::string::npos || slash == 0) {
    fail("the zip's first entry " + quoted_text(first) +
         " is not in a folder; torch.save puts every entry in one (e.g. 'archive/data.pkl')");
  }
  return first.substr(0, slash);
}

// Checks that `data` (storage data from byte data_begin) covers the tensor's bytes.
void check_window(const TensorSource& tensor, std::span<const std::uint8_t> data,
                  std::uint64_t data_begin) {
  if (data_begin > tensor.byte_begin || data.size() < tensor.byte_end - data_begin) {
    fail("tensor " + quoted_text(tensor.name) + " needs bytes [" +
         std::to_string(tensor.byte_begin) + ", " + std::to_string(tensor.byte_end) +
         ") of its storage's data, given [" + std::to_string(data_begin) + ", " +
         std::to_string(data_begin + data.size()) + ")");
  }
}

// Calls emit(element bytes, value index) for each value in row-major order.
template <class Emit>
void walk(const TensorSource& tensor, const std::uint8_t* data, std::uint64_t data_begin,
          Emit emit) {
  const std::size_t size = pickle::dtype_size(tensor.dtype);
  if (tensor.element_count == 0) return;
  const std::size_t rank = tensor.shape.size();
  const std::uint8_t* base = data + (tensor.storage_offset * size - data_begin);
  if (rank == 0) {
    emit(base, 0);
    return;
  }
  std::vector<std::uint64_t> index(rank, 0);
  const std::uint64_t inner = tensor.shape[rank - 1];
  const std::uint64_t inner_step = tensor.strides[rank - 1] * size;
  std::uint64_t offset = 0;  // bytes from base to the current row's first value
  for (std::uint64_t value = 0; value < tensor.element_count;) {
    const std::uint8_t* at = base + offset;
    for (std::uint64_t i = 0; i < inner; ++i, at += inner_step) emit(at, value++);
    // Next row: carry through the outer dimensions.
    for (std::size_t d = rank - 1; d-- > 0;) {
      offset += tensor.strides[d] * size;
      if (++index[d] < tensor.shape[d]) break;
      offset -= tensor.shape[d] * tensor.strides[d] * size;
      index[d] = 0;
    }
  }
}

}  // namespace

void check_magic(std::span<const std::uint8_t> first) {
  if (first.size() < sizeof kZipStart) {
    fail("the file is " + count_text(first.size(), "byte") +
         " long, too short to be a PyTorch checkpoint");
  }
  if (starts_with(first, kZipStart) || starts_with(first, kEmptyZipStart)) return;
  if (starts_with(first, kLegacyStart)) {
    fail(
        "the file is in the legacy PyTorch format (torch.save before torch 1.6, or with "
        "_use_new_zipfile_serialization=False), which is not read: re-save it with torch >= 1.6 "
        "(torch.save(state_dict, 'pytorch_model.bin')) or as .safetensors");
  }
  if (!first.empty() && first[0] == 0x80) {
    fail(
        "the file is a bare pickle, not torch.save's zip format (the legacy PyTorch format "
        "begins so): re-save it with torch >= 1.6 or as .safetensors");
  }
  fail("the file is not a PyTorch zip checkpoint (it begins with " + hex_bytes(first) +
       ", a zip archive with 50 4b 03 04)");
}

const zip::Entry& pickle_entry(const zip::Directory& directory) {
  const std::string archive = archive_of(directory);
  if (const zip::Entry* entry = directory.find(archive + "/data.pkl")) return *entry;
  if (directory.find(archive + "/constants.pkl") != nullptr) {
    fail("the zip is a TorchScript archive (torch.jit.save), not a state dict saved by torch.save");
  }
  fail("the zip has no " + quoted_text(archive + "/data.pkl") +
       ": it is not a checkpoint written by torch.save");
}

const zip::Entry* byteorder_entry(const zip::Directory& directory) {
  return directory.find(archive_of(directory) + "/byteorder");
}

void check_byteorder(std::span<const std::uint8_t> byteorder) {
  const std::string_view order(reinterpret_cast<const char*>(byteorder.data()), byteorder.size());
  if (order == "little") return;
  if (order == "big") {
    fail(
        "the checkpoint was saved on a big-endian machine (its byteorder entry says 'big'); only "
        "little-endian checkpoints are read: re-save it on a little-endian one or as .safetensors");
  }
  fail("the byteorder entry says " + quoted_text(order) + ", neither 'little' nor 'big'");
}

Checkpoint describe(const zip::Directory& directory, std::span<const std::uint8_t> pickle,
                    const pickle::Limits& limits) {
  const zip::Entry& pickle_file = pickle_entry(directory);
  if (pickle.size() != pickle_file.size) {
    fail(quoted_text(pickle_file.name) + " is " + count_text(pickle_file.size, "byte") + " but " +
         count_text(pickle.size(), "byte") + " were given");
  }
  Checkpoint checkpoint;
  checkpoint.archive = archive_of(directory);
  pickle::StateDict state = pickle::read_state_dict(pickle, limits);
  std::map<std::string, std::size_t> entries;  // names from the file: no hash to collide
  for (std::size_t i = 0; i < directory.entries.size(); ++i) {
    entries.emplace(directory.entries[i].name, i);
  }
  for (const pickle::Storage& storage : state.storages) {
    const std::string name = checkpoint.archive + "/data/" + storage.key;
    const auto found = entries.find(name);
    if (found == entries.end()) {
      fail("storage " + quoted_text(storage.key) + " has no entry " + quoted_text(name) +
           " in the zip");
    }
    const zip::Entry& entry = directory.entries[found->second];
    if (entry.size != storage.byte_size()) {
      fail("entry " + quoted_text(name) + " holds " + count_text(entry.size, "byte") +
           " but storage " + quoted_text(storage.key) + " is " +
           count_text(storage.elements, std::string(pickle::dtype_name(storage.dtype)) + " value") +
           " (" + count_text(storage.byte_size(), "byte") + ")");
    }
    checkpoint.storages.push_back({storage.key, storage.dtype, storage.elements,
                                   storage.byte_size(), found->second, entry.local_header_offset,
                                   entry.span_end});
  }
  for (pickle::Tensor& tensor : state.tensors) {
    const std::size_t size = pickle::dtype_size(tensor.dtype);
    TensorSource source;
    source.name = std::move(tensor.name);
    source.dtype = tensor.dtype;
    source.shape = std::move(tensor.shape);
    source.strides = std::move(tensor.strides);
    source.storage_offset = tensor.storage_offset;
    source.element_count = tensor.element_count;
    source.storage = tensor.storage;
    source.contiguous = tensor.contiguous;
    // read_state_dict checked offset + extent against the storage, whose bytes fit in 63 bits.
    source.byte_begin = tensor.storage_offset * size;
    source.byte_end = (tensor.storage_offset + tensor.extent) * size;
    checkpoint.tensors.push_back(std::move(source));
  }
  return checkpoint;
}

void gather_raw(const TensorSource& tensor, std::span<const std::uint8_t> data,
                std::uint64_t data_begin, std::span<std::uint8_t> out) {
  if (out.size() != tensor.value_bytes()) {
    fail("tensor " + quoted_text(tensor.name) + " has " + count_text(tensor.value_bytes(), "byte") +
         " of values, " + count_text(out.size(), "byte") + " were asked for");
  }
  check_window(tensor, data, data_begin);
  const std::size_t size = pickle::dtype_size(tensor.dtype);
  if (tensor.contiguous) {
    if (!out.empty())
      std::memcpy(out.data(), data.data() + (tensor.byte_begin - data_begin), out.size());
    return;
  }
  std::uint8_t* to = out.data();
  walk(tensor, data.data(), data_begin, [&](const std::uint8_t* value, std::uint64_t i) {
    std::memcpy(to + i * size, value, size);
  });
}

void gather_f32(const TensorSource& tensor, std::span<const std::uint8_t> data,
                std::uint64_t data_begin, std::span<float> out) {
  const auto dtype = safetensors_dtype(tensor.dtype);
  if (!dtype || *dtype == safetensors::DType::U8 || *dtype == safetensors::DType::Bool) {
    fail("tensor " + quoted_text(tensor.name) + " is " + pickle::dtype_name(tensor.dtype) +
         ", not floating point (F32, F64, F16 or BF16)");
  }
  if (out.size() != tensor.element_count) {
    fail("tensor " + quoted_text(tensor.name) + " has " +
         count_text(tensor.element_count, "value") + ", " + count_text(out.size(), "value") +
         " were asked for");
  }
  check_window(tensor, data, data_begin);
  if (tensor.contiguous) {
    const std::size_t size = pickle::dtype_size(tensor.dtype);
    safetensors::convert_to_f32(
        *dtype, data.subspan(tensor.byte_begin - data_begin, out.size() * size), out);
    return;
  }
  float* to = out.data();
  walk(tensor, data.data(), data_begin, [&](const std::uint8_t* value, std::uint64_t i) {
    switch (tensor.dtype) {
      case pickle::DType::F32:
        std::memcpy(to + i, value, 4);
        break;
      case pickle::DType::F64: {
        double wide = 0;
        std::memcpy(&wide, value, 8);
        to[i] = static_cast<float>(wide);
        break;
      }
      case pickle::DType::F16:
        to[i] = f16_to_f32(std::uint16_t(value[0] | (value[1] << 8)));
        break;
      case pickle::DType::BF16:
        to[i] = bf16_to_f32(std::uint16_t(value[0] | (value[1] << 8)));
        break;
      default:
        break;  // refused above
    }
  });
}

void convert_to_f32(pickle::DType dtype, std::span<const std::uint8_t> bytes,
                    std::span<float> out) {
  const auto converted = safetensors_dtype(dtype);
  if (!converted) {
    fail(std::string("a ") + pickle::dtype_name(dtype) +
         " tensor is not floating point (F32, F64, F16 or BF16)");
  }
  safetensors::convert_to_f32(*converted, bytes, out);
}

std::optional<safetensors::DType> safetensors_dtype(pickle::DType dtype) {
  switch (dtype) {
    case pickle::DType::F32:
      return safetensors::DType::F32;
    case pickle::DType::F64:
      return safetensors::DType::F64;
    case pickle::DType::F16:
      return safetensors::DType::F16;
    case pickle::DType::BF16:
      return safetensors::DType::BF16;
    case pickle::DType::U8:
      return safetensors::DType::U8;
    case pickle::DType::Bool:
      return safetensors::DType::Bool;
    case pickle::DType::I64:
    case pickle::DType::I32:
      return std::nullopt;
  }
  return std::nullopt;
}

FileView FileView::parse(std::span<const std::uint8_t> file, const Limits& limits) {
  check_magic(file.first(std::min(file.size(), kMagicBytes)));
  FileView view;
  view.file_ = file;
  view.directory_ = zip::read_directory(file, limits.zip);
  const auto pickle = zip::entry_data(file, pickle_entry(view.directory_));
  if (const zip::Entry* byteorder = byteorder_entry(view.directory_)) {
    check_byteorder(zip::entry_data(file, *byteorder));
  }
  view.checkpoint_ = describe(view.directory_, pickle, limits.pickle);
  // Every storage's local header, as a streamed load checks each span when it reads it.
  for (std::size_t i = 0; i < view.checkpoint_.storages.size(); ++i) view.storage_data(i);
  return view;
}

const TensorSource& FileView::tensor(const std::string& name) const {
  for (const TensorSource& tensor : checkpoint_.tensors) {
    if (tensor.name == name) return tensor;
  }
  fail("no tensor named " + quoted_text(name));
}

std::span<const std::uint8_t> FileView::storage_data(std::size_t storage) const {
  return zip::entry_data(file_, directory_.entries.at(checkpoint_.storages.at(storage).entry));
}

std::vector<float> FileView::f32(const TensorSource& tensor) const {
  std::vector<float> values(tensor.element_count);
  gather_f32(tensor, storage_data(tensor.storage), 0, values);
  return values;
}

std::vector<std::uint8_t> FileView::raw(const TensorSource& tensor) const {
  std::vector<std::uint8_t> bytes(tensor.value_bytes());
  gather_raw(tensor, storage_data(tensor.storage), 0, bytes);
  return bytes;
}

}  // namespace attn::torch_checkpoint
