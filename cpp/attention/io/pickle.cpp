// The weights-only unpickler: what a value is, the allow-list of globals, the machine's checks of
// containers, storages and tensors, and the state dict it reads (the opcodes: pickle_step.cpp).
#include "attention/io/pickle.hpp"

#include <algorithm>
#include <bit>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "attention/io/pickle_machine.hpp"
#include "attention/table_row.hpp"

namespace attn::pickle {

namespace detail {

std::string hex_byte(std::uint8_t value) {
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string("0x") + kHex[value >> 4] + kHex[value & 0xF];
}

std::string numbers_text(const std::vector<std::int64_t>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(values[i]);
  }
  return out + "]";
}

const char* kind_name(Kind kind) {
  constexpr const char* names[] = {"None",   "a bool",   "an int",    "a float",
                                   "a str",  "a bytes",  "a tuple",   "a list",
                                   "a dict", "a global", "a storage", "a tensor"};  // by Kind
  static_assert(std::size(names) == static_cast<std::size_t>(Kind::Tensor) + 1);
  return names[static_cast<std::size_t>(kind)];
}

std::optional<Global> allowed_global(const std::string& module, const std::string& name) {
  if (module == "collections" && name == "OrderedDict") {
    return Global{"collections.OrderedDict", Callable::OrderedDict};
  }
  if (module == "torch._utils") {
    static const std::pair<const char*, Callable> kRebuild[] = {
        {"_rebuild_tensor_v2", Callable::RebuildTensorV2},
        {"_rebuild_tensor", Callable::RebuildTensor},
        {"_rebuild_parameter", Callable::RebuildParameter},
        {"_rebuild_parameter_with_state", Callable::RebuildParameterWithState}};
    for (const auto& [function, callable] : kRebuild) {
      if (name == function) return Global{module + "." + name, callable};
    }
  }
  if (module == "torch") {
    if (const DTypeInfo* info = find_row(kDTypes, &DTypeInfo::storage, name))
      return Global{module + "." + name, Callable::StorageType, info->dtype};
  }
  return std::nullopt;
}

std::int64_t Machine::integer(Ref ref, const std::string& what) const {
  const Value& v = value(ref);
  if (v.kind != Kind::Int && v.kind != Kind::Bool) {
    fail(what + " must be an int, found " + kind_name(v.kind));
  }
  return v.number;
}

const std::vector<Ref>& Machine::tuple_items(Ref ref, const std::string& what) {
  if (value(ref).kind != Kind::Tuple) {
    fail(what + " must be a tuple, found " + kind_name(value(ref).kind));
  }
  return container(ref).items;
}

std::vector<std::int64_t> Machine::integers(Ref ref, const std::string& what) const {
  const Value& v = value(ref);
  if (v.kind != Kind::Tuple && v.kind != Kind::List) {
    fail(what + " must be a tuple of ints, found " + kind_name(v.kind));
  }
  const auto& items = containers_[v.index].items;
  if (items.size() > limits_.max_rank) {
    fail(what + " has " + count_text(items.size(), "dimension") + ", more than the limit of " +
         std::to_string(limits_.max_rank));
  }
  std::vector<std::int64_t> out;
  for (const Ref item : items) out.push_back(integer(item, what + "'s entries"));
  return out;
}

void Machine::global(const std::string& module, const std::string& name) {
  std::optional<Global> allowed = allowed_global(module, name);
  if (!allowed) {
    fail("the pickle names " + escaped_text(module) + "." + escaped_text(name) +
         ", which a weights-only load refuses (it reads only tensors, their storages and "
         "OrderedDict)");
  }
  globals_.push_back(std::move(*allowed));
  push(make({Kind::Global, 0, static_cast<std::uint32_t>(globals_.size() - 1), 0}));
}

std::string Machine::dict_key(Ref key) const {
  const Value& v = value(key);
  switch (v.kind) {
    case Kind::String:
      return "s" + strings_[v.index];
    case Kind::Bytes:
      return "b" + strings_[v.index];
    case Kind::Int:
    case Kind::Bool:
      return "i" + std::to_string(v.number);  // Python: True == 1
    case Kind::None:
      return "n";
    default:
      fail(std::string("a dict key that is ") + kind_name(v.kind) +
           " (only str, bytes, int and None keys are read)");
  }
}

void Machine::set_item(Ref dict, Ref key, Ref item) {
  if (value(dict).kind != Kind::Dict) {
    fail(std::string("setting an item of ") + kind_name(value(dict).kind) + ", not a dict");
  }
  std::string canonical = dict_key(key);
  nest(dict, key);
  nest(dict, item);
  Container& target = container(dict);
  if (!target.positions) target.positions = std::make_unique<std::map<std::string, std::size_t>>();
  const auto [found, added] =
      target.positions->try_emplace(std::move(canonical), target.items.size());
  if (added) {
    target.items.push_back(key);
    target.items.push_back(item);
  } else {
    target.items[found->second + 1] = item;  // Python keeps the first position
  }
}

Ref Machine::rebuild_tensor(const std::vector<Ref>& args, const char* function) {
  const std::string where = std::string(function) + "'s ";
  if (value(args[0]).kind != Kind::Storage) {
    fail(where + "storage must be a storage (a persistent id), found " +
         kind_name(value(args[0]).kind));
  }
  if (tensors_.size() >= limits_.max_tensors) {
    fail("more than " + count_text(limits_.max_tensors, "tensor") + " (the limit)");
  }
  PendingTensor tensor;
  tensor.storage = value(args[0]).index;
  tensor.offset = integer(args[1], where + "storage offset");
  tensor.shape = integers(args[2], where + "size");
  tensor.strides = integers(args[3], where + "stride");
  if (tensor.strides.size() != tensor.shape.size()) {
    fail(where + "size " + numbers_text(tensor.shape) + " and stride " +
         numbers_text(tensor.strides) + " have different lengths");
  }
  tensors_.push_back(std::move(tensor));
  return make({Kind::Tensor, 0, static_cast<std::uint32_t>(tensors_.size() - 1), 0});
}

void Machine::reduce() {
  const Ref args_ref = pop();
  const Ref function_ref = top();
  const Value& function = value(function_ref);
  if (function.kind != Kind::Global) {
    fail(std::string("REDUCE calls ") + kind_name(function.kind) +
         ", not one of the functions a weights-only load allows");
  }
  const Global& global = globals_[function.index];
  if (global.callable == Callable::StorageType) {
    fail("REDUCE calls " + global.path +
         ", which a weights-only load does not call (a storage type is only read from "
         "a persistent id)");
  }
  const std::vector<Ref> args = tuple_items(args_ref, global.path + "'s arguments");
  const auto expect = [&](std::size_t low, std::size_t high) {
    if (args.size() < low || args.size() > high) {
      fail(global.path + " is given " + count_text(args.size(), "argument") + ", expected " +
           std::to_string(low) + (high != low ? " or " + std::to_string(high) : ""));
    }
  };
  Ref out = 0;
  switch (global.callable) {
    case Callable::OrderedDict: {
      expect(0, 1);
      out = make_container(Kind::Dict, {});
      if (args.size() == 1) {  // OrderedDict([(key, value), ...]) (Python 2's pickles)
        const Value& pairs = value(args[0]);
        if (pairs.kind != Kind::List && pairs.kind != Kind::Tuple) {
          fail("collections.OrderedDict's argument must be a list of pairs, found " +
               std::string(kind_name(pairs.kind)));
        }
        const std::vector<Ref> items = containers_[pairs.index].items;
        for (const Ref pair : items) {
          const Value& p = value(pair);
          if ((p.kind != Kind::List && p.kind != Kind::Tuple) ||
              containers_[p.index].items.size() != 2) {
            fail("collections.OrderedDict's argument must be a list of (key, value) pairs");
          }
          const auto kv = containers_[p.index].items;
          set_item(out, kv[0], kv[1]);
        }
      }
      break;
    }
    case Callable::RebuildTensorV2:
      // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
      expect(6, 7);
      out = rebuild_tensor(args, "torch._utils._rebuild_tensor_v2");
      break;
    case Callable::RebuildTensor:  // (storage, storage_offset, size, stride)
      expect(4, 4);
      out = rebuild_tensor(args, "torch._utils._rebuild_tensor");
      break;
    case Callable::RebuildParameter:           // (data, requires_grad, backward_hooks)
    case Callable::RebuildParameterWithState:  // (data, requires_grad, backward_hooks, state)
      if (global.callable == Callable::RebuildParameter) {
        expect(3, 3);
      } else {
        expect(4, 4);
      }
      if (value(args[0]).kind != Kind::Tensor) {
        fail(global.path + "'s data must be a tensor, found " + kind_name(value(args[0]).kind));
      }
      out = args[0];  // a Parameter is its tensor
      break;
    case Callable::StorageType:
      break;
  }
  stack_.back() = out;
}

void Machine::build() {
  const Ref state = pop();
  const Value& target = value(top());
  // A state dict's attributes (its _metadata): read and dropped.
  if (target.kind != Kind::Dict) {
    fail(std::string("BUILD of ") + kind_name(target.kind) +
         ", which a weights-only load refuses (it only sets a dict's attributes)");
  }
  const Kind kind = value(state).kind;
  if (kind != Kind::Dict && kind != Kind::None && kind != Kind::Tuple) {
    fail(std::string("BUILD of a dict with ") + kind_name(kind) + " as its state");
  }
}

void Machine::persistent_id() {
  const Ref pid = pop();
  const std::string shape =
      " (torch.save's is ('storage', storage type, key, location, element count))";
  const Value& v = value(pid);
  if (v.kind != Kind::Tuple || containers_[v.index].items.size() != 5) {
    fail(std::string("a persistent id that is ") + kind_name(v.kind) +
         (v.kind == Kind::Tuple ? " of " + count_text(containers_[v.index].items.size(), "item")
                                : std::string()) +
         shape);
  }
  const std::vector<Ref> items = containers_[v.index].items;
  const auto text_of = [&](Ref ref, const char* what) -> const std::string& {
    const Kind kind = value(ref).kind;
    if (kind != Kind::String && kind != Kind::Bytes) {
      fail(std::string("a persistent id whose ") + what + " is " + kind_name(kind) + shape);
    }
    return text(ref);
  };
  const std::string& tag = text_of(items[0], "tag");
  if (tag != "storage") {
    fail("a persistent id of kind " + quoted_text(tag) +
         ": a weights-only load reads only storages");
  }
  const Value& type = value(items[1]);
  if (type.kind != Kind::Global || globals_[type.index].callable != Callable::StorageType) {
    fail("a persistent id whose storage type is " +
         (type.kind == Kind::Global ? globals_[type.index].path : kind_name(type.kind)) + shape);
  }
  const DType dtype = globals_[type.index].dtype;
  const std::string& key = text_of(items[2], "key");
  const std::string& location = text_of(items[3], "location");
  if (key.empty() || key.size() > kMaxKeyBytes || location.size() > kMaxKeyBytes) {
    fail("a storage key or location of " +
         count_text(std::max(key.size(), location.size()), "byte") + " (1 to 256 are read)");
  }
  const std::int64_t elements = integer(items[4], "a storage's element count");
  const std::size_t size = dtype_size(dtype);
  if (elements < 0 || std::uint64_t(elements) > (kMaxBytes - 1) / size) {
    fail("storage " + quoted_text(key) + " claims " + std::to_string(elements) + " " +
         dtype_name(dtype) + " values, which is negative or overflows");
  }
  const auto [found, added] = storage_keys_.try_emplace(key, storages_.size());
  if (added) {
    storages_.push_back({key, dtype, std::uint64_t(elements), location});
  } else {
    const Storage& known = storages_[found->second];
    if (known.dtype != dtype || known.elements != std::uint64_t(elements)) {
      fail("storage " + quoted_text(key) + " is named as " + count_text(known.elements, "value") +
           " of " + dtype_name(known.dtype) + " and as " +
           count_text(std::uint64_t(elements), "value") + " of " + dtype_name(dtype));
    }
  }
  push(make({Kind::Storage, 0, static_cast<std::uint32_t>(found->second), 0}));
}

Tensor Machine::check_tensor(const std::string& name, const PendingTensor& pending,
                             std::vector<std::size_t>& storage_order, StateDict& out) const {
  const Storage& storage = storages_[pending.storage];
  const std::string label = "data.pkl: tensor " + quoted_text(name);
  const std::string layout = " (shape " + numbers_text(pending.shape) + ", strides " +
                             numbers_text(pending.strides) + ", storage offset " +
                             std::to_string(pending.offset) + ")";
  Tensor tensor;
  tensor.name = name;
  tensor.dtype = storage.dtype;
  if (pending.offset < 0) throw Error(label + " has a negative storage offset" + layout);
  tensor.storage_offset = std::uint64_t(pending.offset);
  for (std::size_t d = 0; d < pending.shape.size(); ++d) {
    if (pending.shape[d] < 0 || pending.strides[d] < 0) {
      throw Error(label + " has a negative size or stride" + layout);
    }
    tensor.shape.push_back(std::uint64_t(pending.shape[d]));
    tensor.strides.push_back(std::uint64_t(pending.strides[d]));
  }
  // Element count, then the storage elements the values lie in, all checked for overflow.
  const bool empty = std::find(tensor.shape.begin(), tensor.shape.end(), 0u) != tensor.shape.end();
  const std::uint64_t max_count = (kMaxBytes - 1) / dtype_size(storage.dtype);
  std::uint64_t count = empty ? 0 : 1;
  for (std::size_t d = 0; d < tensor.shape.size() && !empty; ++d) {
    if (count > max_count / tensor.shape[d]) {
      throw Error(label + layout + " has an element count whose byte size overflows");
    }
    count *= tensor.shape[d];
  }
  tensor.element_count = count;
  if (count > 0) {
    std::uint64_t extent = 1;
    for (std::size_t d = 0; d < tensor.shape.size(); ++d) {
      const std::uint64_t reach = tensor.shape[d] - 1;
      const std::uint64_t stride = tensor.strides[d];
      if (reach != 0 && stride > (kMaxBytes - extent) / reach) {
        throw Error(label + layout + " spans more elements than can be counted (it overflows)");
      }
      extent += reach * stride;
    }
    tensor.extent = extent;
    if (tensor.storage_offset > storage.elements ||
        extent > storage.elements - tensor.storage_offset) {
      throw Error(label + layout + " needs elements up to " +
                  (tensor.storage_offset > kMaxBytes - extent
                       ? std::string("beyond 2^63")
                       : std::to_string(tensor.storage_offset + extent)) +
                  " of its storage " + quoted_text(storage.key) + ", which holds " +
                  count_text(storage.elements, std::string(dtype_name(storage.dtype)) + " value") +
                  ": it runs past its storage");
    }
    std::uint64_t expected = 1;
    for (std::size_t d = tensor.shape.size(); d-- > 0;) {
      if (tensor.shape[d] != 1 && tensor.strides[d] != expected) tensor.contiguous = false;
      expected *= tensor.shape[d];
    }
  } else if (tensor.storage_offset > storage.elements) {
    throw Error(label + layout + " starts past the end of its storage " + quoted_text(storage.key) +
                " (" + count_text(storage.elements, "value") + ")");
  }
  // Storages in the order the tensors first name them.
  if (storage_order[pending.storage] == SIZE_MAX) {
    storage_order[pending.storage] = out.storages.size();
    out.storages.push_back(storage);
  }
  tensor.storage = storage_order[pending.storage];
  tensor.storage_key = storage.key;
  return tensor;
}

StateDict Machine::result(Ref root) {
  const Value& dict = value(root);
  if (dict.kind != Kind::Dict) {
    throw Error(std::string("data.pkl: the pickle holds ") + kind_name(dict.kind) +
                ", not a state dict (a dict of tensors)");
  }
  StateDict out;
  std::vector<std::size_t> storage_order(storages_.size(), SIZE_MAX);
  const std::vector<Ref>& items = containers_[dict.index].items;
  for (std::size_t i = 0; i < items.size(); i += 2) {
    const Value& key = value(items[i]);
    if (key.kind != Kind::String) {
      throw Error(std::string("data.pkl: the state dict has a key that is ") + kind_name(key.kind) +
                  ", not a str");
    }
    const std::string& name = strings_[key.index];
    const Value& tensor = value(items[i + 1]);
    if (tensor.kind != Kind::Tensor) {
      throw Error("data.pkl: state dict entry " + quoted_text(name) + " is " +
                  kind_name(tensor.kind) + ", not a tensor");
    }
    out.tensors.push_back(check_tensor(name, tensors_[tensor.index], storage_order, out));
  }
  return out;
}

}  // namespace detail

using detail::DTypeInfo;
using detail::kDTypes;
using detail::Machine;

const char* dtype_name(DType dtype) {
  const DTypeInfo* info = find_row(kDTypes, &DTypeInfo::dtype, dtype);
  return info != nullptr ? info->name : "unknown";
}

std::size_t dtype_size(DType dtype) {
  const DTypeInfo* info = find_row(kDTypes, &DTypeInfo::dtype, dtype);
  return info != nullptr ? info->size : 1;
}

StateDict read_state_dict(std::span<const std::uint8_t> pickle, const Limits& limits) {
  Machine machine(pickle, limits);
  return machine.run();
}

}  // namespace attn::pickle
