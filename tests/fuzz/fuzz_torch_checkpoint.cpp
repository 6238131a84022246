// libFuzzer target for pytorch_model.bin: the zip reader, the weights-only unpickler and the tensor
// sources (cpp/attention/io/zip, pickle, torch_checkpoint), built with
// -fsanitize=fuzzer,address,undefined by the `fuzz` preset and run by npm test (scripts/test.sh)
// for a bounded time from tests/fuzz/seeds-torch/ (the valid files' data.pkl), tests/data/torch/
// and the hostile set tests/data/malformed-torch/.
//
// Any input may be refused, but only with attn::Error: another exception escaping, a sanitizer
// report, or a broken invariant below (abort) is a finding. An input starting with "PK" is read
// as a checkpoint, any other as a bare data.pkl:
//   checkpoint: check_magic, then FileView::parse (directory, data.pkl, every storage's local
//     header); when it parses, every tensor of at most 1 MB of values is read whole (raw bytes and,
//     for F32/F64/F16/BF16, floats) and by the streamed path (the tail, the directory, each span
//     from its first 64 bytes, a contiguous tensor in 5-byte-aligned pieces, a strided one from a
//     window of exactly its bytes), and both must agree bit for bit; a contiguous tensor's values
//     are its storage's bytes [byte_begin, byte_end) and an F32 tensor's floats are its raw bytes;
//   pickle: read_state_dict; when it reads, every tensor lies within its storage, its element
//     count is its shape's product and a contiguous one spans exactly its values.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/io/pickle.hpp"
#include "attention/io/torch_checkpoint.hpp"
#include "attention/io/zip.hpp"

namespace tc = attn::torch_checkpoint;
namespace pk = attn::pickle;

namespace {

constexpr std::uint64_t kMaxValueBytes = 1 << 20;  // larger tensors (stride 0) are not read

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz_torch_checkpoint: invariant broken: %s\n", what.c_str());
  std::abort();
}

bool floating(pk::DType dtype) {
  return dtype == pk::DType::F32 || dtype == pk::DType::F64 || dtype == pk::DType::F16 ||
         dtype == pk::DType::BF16;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
}

void check_state_dict(const pk::StateDict& state) {
  for (const pk::Tensor& tensor : state.tensors) {
    if (tensor.storage >= state.storages.size()) broken("a tensor's storage index");
    const pk::Storage& storage = state.storages[tensor.storage];
    if (storage.key != tensor.storage_key || storage.dtype != tensor.dtype) broken("storage");
    if (tensor.shape.size() != tensor.strides.size()) broken("rank");
    std::uint64_t count = 1;
    bool overflow = false;
    for (const std::uint64_t size : tensor.shape)
      overflow |= __builtin_mul_overflow(count, size, &count);
    if (overflow || count != tensor.element_count) broken("element count of '" + tensor.name + "'");
    if (count > 0 && tensor.storage_offset + tensor.extent > storage.elements) {
      broken("'" + tensor.name + "' runs past its storage");
    }
    if (count > 0 && tensor.contiguous && tensor.extent != tensor.element_count) {
      broken("contiguous '" + tensor.name + "' spans other than its values");
    }
  }
}

// The streamed path's values of every small tensor, as in tests/cpp/test_torch_checkpoint.cpp.
void check_streamed(std::span<const std::uint8_t> file, const tc::FileView& view) {
  const std::uint64_t size = file.size();
  const auto tail = file.last(static_cast<std::size_t>(attn::zip::tail_bytes_needed(size)));
  const attn::zip::DirectoryLocation location = attn::zip::locate_directory(tail, size);
  const attn::zip::Directory directory =
      attn::zip::parse_directory(file.subspan(location.offset, location.size), location, size);
  const auto head = [&](const attn::zip::Entry& entry) {
    return file.subspan(entry.local_header_offset,
                        std::min<std::uint64_t>(entry.span_size(), 64 + entry.name.size()));
  };
  const attn::zip::Entry& pickle = tc::pickle_entry(directory);
  std::uint64_t start;
  try {
    start = pickle.local_header_offset + attn::zip::data_start(pickle, head(pickle));
  } catch (const attn::Error&) {  // a header longer than the 64-byte head: the whole span
    start =
        pickle.local_header_offset +
        attn::zip::data_start(pickle, file.subspan(pickle.local_header_offset, pickle.span_size()));
  }
  const tc::Checkpoint streamed = tc::describe(directory, file.subspan(start, pickle.size));
  if (streamed.tensors.size() != view.checkpoint().tensors.size()) broken("streamed tensor count");
  for (std::size_t i = 0; i < streamed.tensors.size(); ++i) {
    const tc::TensorSource& tensor = streamed.tensors[i];
    if (tensor.value_bytes() > kMaxValueBytes) continue;
    const tc::StorageSource& storage = streamed.storages[tensor.storage];
    const attn::zip::Entry& entry = directory.entries[storage.entry];
    const std::uint64_t data =
        storage.span_begin +
        attn::zip::data_start(entry, file.subspan(storage.span_begin, entry.span_size()));
    std::vector<std::uint8_t> raw(tensor.value_bytes());
    const auto window = file.subspan(data + tensor.byte_begin, tensor.byte_end - tensor.byte_begin);
    tc::gather_raw(tensor, window, tensor.byte_begin, raw);
    if (raw != view.raw(view.checkpoint().tensors[i])) broken("streamed bytes of " + tensor.name);
    if (!floating(tensor.dtype)) continue;
    std::vector<float> values(tensor.element_count);
    if (tensor.contiguous) {
      const std::size_t value = pk::dtype_size(tensor.dtype);
      const std::size_t piece = (5 / value + 1) * value;
      for (std::size_t at = 0; at < window.size(); at += piece) {
        const auto chunk = window.subspan(at, std::min(piece, window.size() - at));
        tc::convert_to_f32(tensor.dtype, chunk,
                           std::span<float>(values).subspan(at / value, chunk.size() / value));
      }
    } else {
      tc::gather_f32(tensor, window, tensor.byte_begin, values);
    }
    if (!same_bits(values, view.f32(view.checkpoint().tensors[i]))) {
      broken("streamed values of " + tensor.name);
    }
  }
}

void check_checkpoint(std::span<const std::uint8_t> bytes) {
  try {
    tc::check_magic(bytes.first(std::min(bytes.size(), tc::kMagicBytes)));
  } catch (const attn::Error&) {
    return;
  }
  std::optional<tc::FileView> view;
  try {
    view = tc::FileView::parse(bytes);
  } catch (const attn::Error&) {
    return;
  }
  for (const tc::TensorSource& tensor : view->checkpoint().tensors) {
    const tc::StorageSource& storage = view->checkpoint().storages.at(tensor.storage);
    if (tensor.byte_begin > tensor.byte_end || tensor.byte_end > storage.byte_size) {
      broken("'" + tensor.name + "' bytes past its storage");
    }
    if (tensor.value_bytes() > kMaxValueBytes) continue;
    const std::vector<std::uint8_t> raw = view->raw(tensor);
    if (raw.size() != tensor.value_bytes()) broken("raw size of " + tensor.name);
    if (tensor.contiguous && tensor.element_count > 0) {
      const auto data = view->storage_data(tensor.storage);
      if (!std::equal(raw.begin(), raw.end(), data.begin() + tensor.byte_begin)) {
        broken("contiguous '" + tensor.name + "' is not its bytes");
      }
    }
    if (!floating(tensor.dtype)) continue;
    const std::vector<float> values = view->f32(tensor);
    if (values.size() != tensor.element_count) broken("value count of " + tensor.name);
    if (tensor.dtype == pk::DType::F32 && !raw.empty() &&
        std::memcmp(values.data(), raw.data(), raw.size()) != 0) {
      broken("F32 values of '" + tensor.name + "' are not its bytes");
    }
  }
  check_streamed(bytes, *view);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  if (size >= 2 && data[0] == 'P' && data[1] == 'K') {
    check_checkpoint(bytes);
    return 0;
  }
  try {
    check_state_dict(pk::read_state_dict(bytes));
  } catch (const attn::Error&) {
  }
  return 0;
}
