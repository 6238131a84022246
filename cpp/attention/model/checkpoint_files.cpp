// A checkpoint's files by their first bytes, described step by step, see checkpoint_files.hpp.
#include "attention/model/checkpoint_files.hpp"

#include <algorithm>
#include <limits>

#include "attention/error.hpp"

namespace attn {

namespace {

std::string str(std::uint64_t value) {
  return std::to_string(value);
}

constexpr std::uint8_t kZipStart[] = {'P', 'K', 0x03, 0x04};
constexpr std::uint8_t kEmptyZipStart[] = {'P', 'K', 0x05, 0x06};
// Bytes after data.pkl's data its entry's span may hold: a data descriptor, or the padding and
// local header of the entry after it within the span's bounds (zip.hpp: spans end at the next
// local header).
constexpr std::uint64_t kPickleSpanSlack = std::uint64_t{1} << 18;

bool starts_with(std::span<const std::uint8_t> bytes, std::span<const std::uint8_t> prefix) {
  return bytes.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), bytes.begin());
}

std::uint64_t little_u64(std::span<const std::uint8_t> bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < 8; ++i) value |= std::uint64_t{bytes[i]} << (8 * i);
  return value;
}

safetensors::Limits safetensors_limits() {
  safetensors::Limits limits;
  limits.max_total_bytes = std::numeric_limits<std::size_t>::max();
  limits.max_tensors = 4096;
  return limits;
}

}  // namespace

CheckpointFiles::CheckpointFiles(std::vector<std::uint64_t> file_sizes) {
  if (file_sizes.empty()) throw Error("the checkpoint needs at least one file");
  for (std::size_t f = 0; f < file_sizes.size(); ++f) {
    CheckpointFile file;
    file.size = file_sizes[f];
    files_.push_back(std::move(file));
    states_.emplace_back();
    needed_.push_back({f, 0, std::min<std::uint64_t>(kFirstBytes, file_sizes[f])});
  }
}

void CheckpointFiles::provide(const std::vector<std::span<const std::uint8_t>>& bytes) {
  if (bytes.size() != needed_.size()) {
    throw Error("the checkpoint import asked for " + str(needed_.size()) + " byte ranges, got " +
                str(bytes.size()));
  }
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const ByteRange& range = needed_[i];
    if (bytes[i].size() != range.end - range.begin) {
      throw Error("the weights file" +
                  (files_.size() > 1 ? " (shard " + str(range.file + 1) + ")" : std::string()) +
                  " gave " + str(bytes[i].size()) + " bytes for its bytes [" + str(range.begin) +
                  ", " + str(range.end) + ") (a truncated file?)");
    }
  }
  const std::vector<ByteRange> asked = std::move(needed_);
  needed_.clear();
  // Each file's ranges, in the order asked, to its next step.
  for (std::size_t f = 0; f < files_.size(); ++f) {
    std::vector<std::span<const std::uint8_t>> mine;
    for (std::size_t i = 0; i < asked.size(); ++i) {
      if (asked[i].file == f) mine.push_back(bytes[i]);
    }
    if (!mine.empty()) advance(f, mine);
  }
}

void CheckpointFiles::advance(std::size_t f,
                              const std::vector<std::span<const std::uint8_t>>& bytes) {
  CheckpointFile& file = files_[f];
  State& state = states_[f];
  const std::span<const std::uint8_t> first = bytes.front();
  switch (state.step) {
    case Step::First: {
      if (gguf::has_magic(first)) {
        if (files_.size() > 1) {
          throw Error("the weights are " + str(files_.size()) + " files and shard " + str(f + 1) +
                      " is a GGUF file; supported: one GGUF file (split GGUF files, "
                      "-00001-of-0000N.gguf, are not read yet)");
        }
        file.format = CheckpointFormat::Gguf;
        state.step = Step::GgufHead;
        needed_.push_back({f, 0, std::min(gguf::kFirstHeadBytes, file.size)});
        return;
      }
      if (starts_with(first, kZipStart) || starts_with(first, kEmptyZipStart)) {
        file.format = CheckpointFormat::TorchZip;
        state.step = Step::ZipTail;
        const std::uint64_t tail = zip::tail_bytes_needed(file.size);
        needed_.push_back({f, file.size - tail, file.size});
        return;
      }
      // A pickle's PROTO opcode where a .safetensors file has its header length, and a length no
      // file of this size can hold: the legacy torch.save format (check_magic names it).
      if (!first.empty() && first[0] == 0x80 &&
          (first.size() < 8 || little_u64(first) > file.size - 8)) {
        torch_checkpoint::check_magic(first);
      }
      file.format = CheckpointFormat::Safetensors;
      const std::uint64_t head =
          safetensors::head_bytes_needed(first, file.size, safetensors_limits());
      if (head <= first.size()) {
        state.step = Step::SafetensorsHead;
        advance(f, {first.first(std::size_t(head))});
        return;
      }
      state.step = Step::SafetensorsHead;
      needed_.push_back({f, 0, head});
      return;
    }
    case Step::SafetensorsHead: {
      const safetensors::Index index =
          safetensors::parse_index(first, file.size, safetensors_limits());
      for (const safetensors::TensorInfo& tensor : index.tensors) {
        StoredTensor stored;
        stored.name = tensor.name;
        stored.dtype = tensor.dtype;
        stored.dtype_name = safetensors::dtype_name(tensor.dtype);
        stored.shape = tensor.shape;
        stored.begin = index.data_offset + std::uint64_t{tensor.begin};
        stored.end = index.data_offset + std::uint64_t{tensor.end};
        file.tensors.push_back(std::move(stored));
      }
      state.step = Step::Done;
      return;
    }
    case Step::ZipTail: {
      const zip::DirectoryLocation location = zip::locate_directory(first, file.size);
      state.step = Step::ZipDirectory;
      needed_.push_back({f, location.offset, location.offset + location.size});
      state.directory.location = location;
      return;
    }
    case Step::ZipDirectory: {
      state.directory = zip::parse_directory(first, state.directory.location, file.size);
      const zip::Entry& pickle = torch_checkpoint::pickle_entry(state.directory);
      const std::uint64_t most = pickle::Limits{}.max_pickle_bytes;
      if (pickle.size > most || pickle.span_size() > most + kPickleSpanSlack) {
        throw Error("PyTorch checkpoint: '" + pickle.name.substr(0, 80) + "' is " +
                    str(pickle.size) + " bytes (its entry " + str(pickle.span_size()) +
                    "); a state dict's data.pkl is at most " + str(most) + " bytes");
      }
      state.step = Step::ZipPickle;
      needed_.push_back({f, pickle.local_header_offset, pickle.span_end});
      if (const zip::Entry* order = torch_checkpoint::byteorder_entry(state.directory)) {
        // "little" or "big": a span of a few hundred bytes (a longer one is no byteorder entry)
        const std::uint64_t end = std::min(order->span_end, order->local_header_offset + 4096);
        needed_.push_back({f, order->local_header_offset, end});
      }
      return;
    }
    case Step::GgufHead: {
      // The header from the file's first bytes; a longer prefix when they do not hold it.
      gguf::HeadResult head = gguf::parse_head(first, file.size);
      if (!head.index) {
        needed_.push_back({f, 0, head.bytes_needed});
        return;
      }
      describe_gguf(f, std::move(*head.index));
      state.step = Step::Done;
      return;
    }
    case Step::ZipPickle:
      describe_zip(f, bytes[0], bytes.size() > 1 ? bytes[1] : std::span<const std::uint8_t>());
      state.step = Step::Done;
      return;
    case Step::Done:
      return;
  }
}

void CheckpointFiles::describe_zip(std::size_t f, std::span<const std::uint8_t> pickle_span,
                                   std::span<const std::uint8_t> byteorder_span) {
  CheckpointFile& file = files_[f];
  const zip::Directory& directory = states_[f].directory;
  const zip::Entry& pickle = torch_checkpoint::pickle_entry(directory);
  const std::uint64_t start = zip::data_start(pickle, pickle_span);
  const auto data = pickle_span.subspan(std::size_t(start), std::size_t(pickle.size));
  if (const zip::Entry* order = torch_checkpoint::byteorder_entry(directory)) {
    const std::uint64_t at = zip::data_start(*order, byteorder_span);
    if (at + order->size > byteorder_span.size()) {
      throw Error("PyTorch checkpoint: its byteorder entry holds " + str(order->size) +
                  " bytes; 'little' or 'big' was expected");
    }
    torch_checkpoint::check_byteorder(
        byteorder_span.subspan(std::size_t(at), std::size_t(order->size)));
  }
  torch_checkpoint::Checkpoint checkpoint = torch_checkpoint::describe(directory, data);
  for (torch_checkpoint::TensorSource& source : checkpoint.tensors) {
    const torch_checkpoint::StorageSource& storage = checkpoint.storages[source.storage];
    const zip::Entry& entry = directory.entries[storage.entry];
    StoredTensor stored;
    stored.name = source.name;
    stored.dtype = torch_checkpoint::safetensors_dtype(source.dtype);
    stored.dtype_name = pickle::dtype_name(source.dtype);
    for (const std::uint64_t dimension : source.shape) {
      if (dimension > std::numeric_limits<std::size_t>::max()) {
        throw Error("PyTorch checkpoint: tensor '" + source.name.substr(0, 80) +
                    "' has a dimension of " + str(dimension) + " values, more than this build " +
                    "addresses");
      }
      stored.shape.push_back(std::size_t(dimension));
    }
    stored.begin = entry.local_header_offset;
    stored.end = entry.span_end;
    stored.entry = entry;
    stored.source = std::move(source);
    file.tensors.push_back(std::move(stored));
  }
}

void CheckpointFiles::describe_gguf(std::size_t f, gguf::Index index) {
  CheckpointFile& file = files_[f];
  for (const gguf::TensorInfo& tensor : index.tensors) {
    StoredTensor stored;
    stored.name = tensor.name;
    stored.ggml_type = tensor.type;
    if (tensor.type == GgmlType::F32) stored.dtype = safetensors::DType::F32;
    if (tensor.type == GgmlType::F16) stored.dtype = safetensors::DType::F16;
    if (tensor.type == GgmlType::BF16) stored.dtype = safetensors::DType::BF16;
    stored.dtype_name = ggml_type_name(tensor.type);
    for (const std::uint64_t dimension : tensor.dims) {
      if (dimension > std::numeric_limits<std::size_t>::max()) {
        throw Error("GGUF file: tensor '" + tensor.name.substr(0, 80) + "' has a dimension of " +
                    str(dimension) + " values, more than this build addresses");
      }
    }
    stored.shape = tensor.shape();
    stored.begin = tensor.begin;
    stored.end = tensor.end;
    file.tensors.push_back(std::move(stored));
  }
  file.gguf = std::make_shared<const gguf::Index>(std::move(index));
}

std::vector<CheckpointFile> describe_checkpoint_files(
    const std::vector<std::span<const std::uint8_t>>& heads,
    const std::vector<std::uint64_t>& file_sizes) {
  if (heads.empty() || heads.size() != file_sizes.size()) {
    throw Error("the checkpoint needs at least one file, and each file's size (got " +
                str(heads.size()) + " files and " + str(file_sizes.size()) + " sizes)");
  }
  CheckpointFiles files(file_sizes);
  while (!files.ready()) {
    std::vector<std::span<const std::uint8_t>> bytes;
    for (const ByteRange& range : files.needed()) {
      const auto head = heads[range.file];
      if (range.end > head.size()) {
        throw Error("the checkpoint's file " + str(range.file + 1) + " is needed up to byte " +
                    str(range.end) + ", " + str(head.size()) + " of its bytes were given");
      }
      bytes.push_back(head.subspan(std::size_t(range.begin), std::size_t(range.end - range.begin)));
    }
    files.provide(bytes);
  }
  return files.files();
}

}  // namespace attn
