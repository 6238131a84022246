// A weights-only unpickler for a PyTorch checkpoint's data.pkl: the state dict's tensors as
// metadata (name, dtype, shape, strides, storage and offset), never running anything it names.
//
// It follows torch.load(weights_only=True) (torch/_weights_only_unpickler.py): the opcodes
// torch.save emits (pickle protocol 2, and the protocol-4 framing, memo and short-string opcodes),
// and an allow-list of the globals a state dict needs: collections.OrderedDict,
// torch._utils._rebuild_tensor_v2 / _rebuild_tensor / _rebuild_parameter /
// _rebuild_parameter_with_state, and the typed storages torch.FloatStorage, DoubleStorage,
// HalfStorage, BFloat16Storage, LongStorage, IntStorage, ByteStorage and BoolStorage (only as a
// persistent id's storage type: ('storage', type, key, location, element count)). Any other global
// is refused with its module.name, REDUCE runs only the allowed functions, BUILD only sets a
// dict's attributes (a state dict's _metadata), and the memo, the stack, MARK depth, nesting,
// string lengths, values and operations are all bounded. Every failure is an attn::Error whose
// message names the problem and where in data.pkl it is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace attn::pickle {

// The element types of the typed storages read.
enum class DType { F32, F64, F16, BF16, I64, I32, U8, Bool };

const char* dtype_name(DType dtype);  // "F32", "F64", "F16", "BF16", "I64", "I32", "U8", "BOOL"
std::size_t dtype_size(DType dtype);  // bytes per element

struct Limits {
  std::size_t max_pickle_bytes = std::size_t{32} << 20;
  std::size_t max_operations = std::size_t{1} << 25;
  std::size_t max_values = std::size_t{1} << 20;  // values created (each op makes at most one)
  std::size_t max_memo_entries = std::size_t{1} << 20;  // every memo index is below this
  std::size_t max_stack = std::size_t{1} << 16;         // values on the stack, all MARKs together
  std::size_t max_marks = 64;                           // MARKs open at once
  std::size_t max_nesting = 64;  // containers within containers (a state dict needs 4)
  std::size_t max_string_bytes = std::size_t{1} << 16;  // one string or bytes value
  std::size_t max_tensors = std::size_t{1} << 17;
  std::size_t max_rank = 8;
};

// A storage the state dict's tensors view: its zip entry is <archive>/data/<key>.
struct Storage {
  std::string key;
  DType dtype = DType::F32;
  std::uint64_t elements = 0;  // as the persistent id says; elements * dtype_size fits in 63 bits
  std::string location;        // where it was saved from: "cpu", "cuda:0", ...

  std::uint64_t byte_size() const { return elements * dtype_size(dtype); }
};

// One entry of the state dict: a strided view of a storage (all counts in elements).
struct Tensor {
  std::string name;
  DType dtype = DType::F32;  // its storage's
  std::vector<std::uint64_t> shape;
  std::vector<std::uint64_t> strides;  // one per dimension
  std::size_t storage = 0;             // index into StateDict::storages
  std::string storage_key;             // that storage's key
  std::uint64_t storage_offset = 0;
  std::uint64_t element_count = 0;  // product of shape (1 for rank 0)
  // Elements of the storage from storage_offset that the values lie in: 1 + Σ (shape_i − 1) ·
  // stride_i (0 when element_count is 0); storage_offset + extent <= the storage's elements.
  std::uint64_t extent = 0;
  // Row-major with no gaps (torch's is_contiguous: dimensions of size 1 have any stride), so its
  // values are the storage's elements [storage_offset, storage_offset + element_count) in order.
  bool contiguous = true;
};

// The state dict in the pickle's order, and the storages its tensors view (in the order the
// tensors first name them; tied weights share one).
struct StateDict {
  std::vector<Tensor> tensors;
  std::vector<Storage> storages;
};

// Unpickles `pickle` (data.pkl's bytes). The result must be a dict (or OrderedDict) of tensors:
// anything else, and any tensor whose shape overflows or runs past its storage, throws.
StateDict read_state_dict(std::span<const std::uint8_t> pickle, const Limits& limits = {});

}  // namespace attn::pickle
