// The weights-only unpickler: a bounded pickle machine over plain values, containers, allowed
// globals, storages and tensor descriptions; nothing it reads is ever called or imported.
#include "attention/io/pickle.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "attention/error.hpp"
#include "attention/utf8.hpp"

namespace attn::pickle {

namespace {

constexpr std::size_t kMaxLineBytes = 256;  // a GLOBAL's module or name
constexpr std::size_t kMaxKeyBytes = 256;   // a storage key or location
constexpr std::size_t kMaxTextInMessage = 80;
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 63;  // byte counts stay below this

// ---- opcodes (CPython's Lib/pickle.py) --------------------------------------------------------

enum Op : std::uint8_t {
  MARK = '(',
  STOP = '.',
  POP = '0',
  POP_MARK = '1',
  DUP = '2',
  BININT = 'J',
  BININT1 = 'K',
  BININT2 = 'M',
  NONE = 'N',
  BINPERSID = 'Q',
  REDUCE = 'R',
  BINSTRING = 'T',
  SHORT_BINSTRING = 'U',
  BINUNICODE = 'X',
  APPEND = 'a',
  BUILD = 'b',
  GLOBAL = 'c',
  APPENDS = 'e',
  BINGET = 'h',
  LONG_BINGET = 'j',
  EMPTY_LIST = ']',
  BINPUT = 'q',
  LONG_BINPUT = 'r',
  SETITEM = 's',
  TUPLE = 't',
  EMPTY_TUPLE = ')',
  SETITEMS = 'u',
  EMPTY_DICT = '}',
  BINFLOAT = 'G',
  BINBYTES = 'B',
  SHORT_BINBYTES = 'C',
  PROTO = 0x80,
  TUPLE1 = 0x85,
  TUPLE2 = 0x86,
  TUPLE3 = 0x87,
  NEWTRUE = 0x88,
  NEWFALSE = 0x89,
  LONG1 = 0x8a,
  SHORT_BINUNICODE = 0x8c,
  BINUNICODE8 = 0x8d,
  BINBYTES8 = 0x8e,
  STACK_GLOBAL = 0x93,
  MEMOIZE = 0x94,
  FRAME = 0x95,
};

// Every opcode's name (CPython's Lib/pickle.py), for messages; those not in Op are refused.
struct OpName {
  std::uint8_t op;
  const char* name;
};
// clang-format off
constexpr OpName kOpNames[] = {
    {'(', "MARK"}, {'.', "STOP"}, {'0', "POP"}, {'1', "POP_MARK"}, {'2', "DUP"}, {'F', "FLOAT"},
    {'I', "INT"}, {'J', "BININT"}, {'K', "BININT1"}, {'L', "LONG"}, {'M', "BININT2"}, {'N', "NONE"},
    {'P', "PERSID"}, {'Q', "BINPERSID"}, {'R', "REDUCE"}, {'S', "STRING"}, {'T', "BINSTRING"},
    {'U', "SHORT_BINSTRING"}, {'V', "UNICODE"}, {'X', "BINUNICODE"}, {'a', "APPEND"},
    {'b', "BUILD"}, {'c', "GLOBAL"}, {'d', "DICT"}, {'}', "EMPTY_DICT"}, {'e', "APPENDS"},
    {'g', "GET"}, {'h', "BINGET"}, {'i', "INST"}, {'j', "LONG_BINGET"}, {'l', "LIST"},
    {']', "EMPTY_LIST"}, {'o', "OBJ"}, {'p', "PUT"}, {'q', "BINPUT"}, {'r', "LONG_BINPUT"},
    {'s', "SETITEM"}, {'t', "TUPLE"}, {')', "EMPTY_TUPLE"}, {'u', "SETITEMS"}, {'G', "BINFLOAT"},
    {'B', "BINBYTES"}, {'C', "SHORT_BINBYTES"}, {0x80, "PROTO"}, {0x81, "NEWOBJ"}, {0x82, "EXT1"},
    {0x83, "EXT2"}, {0x84, "EXT4"}, {0x85, "TUPLE1"}, {0x86, "TUPLE2"}, {0x87, "TUPLE3"},
    {0x88, "NEWTRUE"}, {0x89, "NEWFALSE"}, {0x8a, "LONG1"}, {0x8b, "LONG4"},
    {0x8c, "SHORT_BINUNICODE"}, {0x8d, "BINUNICODE8"}, {0x8e, "BINBYTES8"}, {0x8f, "EMPTY_SET"},
    {0x90, "ADDITEMS"}, {0x91, "FROZENSET"}, {0x92, "NEWOBJ_EX"}, {0x93, "STACK_GLOBAL"},
    {0x94, "MEMOIZE"}, {0x95, "FRAME"}, {0x96, "BYTEARRAY8"}, {0x97, "NEXT_BUFFER"},
    {0x98, "READONLY_BUFFER"},
};
// clang-format on

const char* op_name(std::uint8_t op) {
  for (const OpName& entry : kOpNames) {
    if (entry.op == op) return entry.name;
  }
  return nullptr;
}

std::string hex_byte(std::uint8_t value) {
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string("0x") + kHex[value >> 4] + kHex[value & 0xF];
}

// Text from the file, safe to show: control and non-ASCII bytes escaped, cut past 80 bytes.
std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < kMaxTextInMessage; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7F || c == '\\') {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > kMaxTextInMessage) out += "...";
  return out;
}

std::string quoted(std::string_view text) {
  return "'" + printable(text) + "'";
}

// "1 entry", "2 entries", "3 bytes".
std::string plural(std::uint64_t count, const std::string& noun) {
  if (count == 1) return "1 " + noun;
  if (!noun.empty() && noun.back() == 'y') {
    return std::to_string(count) + " " + noun.substr(0, noun.size() - 1) + "ies";
  }
  return std::to_string(count) + " " + noun + "s";
}

std::string numbers_text(const std::vector<std::int64_t>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(values[i]);
  }
  return out + "]";
}

struct DTypeInfo {
  DType dtype;
  const char* name;
  std::size_t size;
  const char* storage;  // the torch typed storage holding it
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "F32", 4, "FloatStorage"}, {DType::F64, "F64", 8, "DoubleStorage"},
    {DType::F16, "F16", 2, "HalfStorage"},  {DType::BF16, "BF16", 2, "BFloat16Storage"},
    {DType::I64, "I64", 8, "LongStorage"},  {DType::I32, "I32", 4, "IntStorage"},
    {DType::U8, "U8", 1, "ByteStorage"},    {DType::Bool, "BOOL", 1, "BoolStorage"}};

// ---- values -----------------------------------------------------------------------------------

enum class Kind : std::uint8_t {
  None,
  Bool,
  Int,
  Float,
  String,
  Bytes,
  Tuple,
  List,
  Dict,
  Global,
  Storage,
  Tensor
};

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::None:
      return "None";
    case Kind::Bool:
      return "a bool";
    case Kind::Int:
      return "an int";
    case Kind::Float:
      return "a float";
    case Kind::String:
      return "a str";
    case Kind::Bytes:
      return "a bytes";
    case Kind::Tuple:
      return "a tuple";
    case Kind::List:
      return "a list";
    case Kind::Dict:
      return "a dict";
    case Kind::Global:
      return "a global";
    case Kind::Storage:
      return "a storage";
    case Kind::Tensor:
      return "a tensor";
  }
  return "a value";
}

// What an allowed global is.
enum class Callable : std::uint8_t {
  OrderedDict,
  RebuildTensorV2,
  RebuildTensor,
  RebuildParameter,
  RebuildParameterWithState,
  StorageType  // not callable: a persistent id's storage type
};

struct Global {
  std::string path;  // module.name
  Callable callable = Callable::StorageType;
  DType dtype = DType::F32;  // for a storage type
};

using Ref = std::uint32_t;  // index into the machine's values
constexpr Ref kNoRef = ~Ref{0};

struct Value {
  Kind kind = Kind::None;
  std::uint16_t nesting = 0;  // containers within (0 for a scalar)
  std::uint32_t index = 0;    // into strings, containers, globals, storages or tensors
  std::int64_t number = 0;    // Bool, Int; a Float's bits
};

// A tuple's or list's items, or a dict's keys and values (alternating) with its key positions.
// Ordered maps, not hash tables: keys come from the file, and no choice of them can make a
// lookup slower than log n.
struct Container {
  std::vector<Ref> items;
  std::unique_ptr<std::map<std::string, std::size_t>> positions;  // dicts, once set: key → item
};

// A tensor as a rebuild function described it; checked with its name once the dict is read.
struct PendingTensor {
  std::size_t storage = 0;
  std::int64_t offset = 0;
  std::vector<std::int64_t> shape, strides;
};

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
    for (const DTypeInfo& info : kDTypes) {
      if (name == info.storage)
        return Global{module + "." + name, Callable::StorageType, info.dtype};
    }
  }
  return std::nullopt;
}

class Machine {
 public:
  Machine(std::span<const std::uint8_t> bytes, const Limits& limits)
      : bytes_(bytes), limits_(limits) {}

  StateDict run();

 private:
  [[noreturn]] void fail(const std::string& what) const {
    const char* name = op_name(op_);
    throw Error("data.pkl: " + what + " (" + (name ? name : hex_byte(op_)) + " at byte " +
                std::to_string(op_at_) + ")");
  }

  // ---- reading the bytes
  std::span<const std::uint8_t> take(std::uint64_t count) {
    if (count > bytes_.size() - at_) {
      fail("the pickle ends after " + std::to_string(bytes_.size() - at_) + " of an operand's " +
           plural(count, "byte") + " (it is truncated)");
    }
    const auto out = bytes_.subspan(at_, static_cast<std::size_t>(count));
    at_ += static_cast<std::size_t>(count);
    return out;
  }
  std::uint64_t little(std::size_t count) {
    const auto field = take(count);
    std::uint64_t value = 0;
    for (std::size_t i = count; i-- > 0;) value = (value << 8) | field[i];
    return value;
  }
  std::string line() {
    const std::size_t begin = at_;
    while (at_ < bytes_.size() && bytes_[at_] != '\n' && at_ - begin <= kMaxLineBytes) ++at_;
    if (at_ - begin > kMaxLineBytes) fail("a GLOBAL line longer than 256 bytes");
    if (at_ == bytes_.size()) fail("the pickle ends inside a GLOBAL line (it is truncated)");
    std::string text(reinterpret_cast<const char*>(bytes_.data()) + begin, at_ - begin);
    ++at_;  // the newline
    return text;
  }

  // ---- values
  Ref make(Value value) {
    if (values_.size() >= limits_.max_values) {
      fail("the pickle makes more than " + std::to_string(limits_.max_values) +
           " values (the limit)");
    }
    values_.push_back(value);
    return static_cast<Ref>(values_.size() - 1);
  }
  Ref make_text(Kind kind, std::uint64_t length) {
    if (length > limits_.max_string_bytes) {
      fail(std::string(kind == Kind::Bytes ? "a bytes value" : "a string") + " of " +
           plural(length, "byte") + ", more than the limit of " +
           plural(limits_.max_string_bytes, "byte"));
    }
    const auto data = take(length);
    std::string text(data.begin(), data.end());
    if (kind == Kind::String && first_invalid_utf8(text) != std::string_view::npos) {
      fail("a string that is not valid UTF-8");
    }
    strings_.push_back(std::move(text));
    return make({kind, 0, static_cast<std::uint32_t>(strings_.size() - 1), 0});
  }
  Ref make_container(Kind kind, std::vector<Ref> items) {
    std::uint16_t nesting = 0;
    for (const Ref item : items) nesting = std::max(nesting, values_[item].nesting);
    check_nesting(nesting + 1u);
    Container container;
    container.items = std::move(items);
    containers_.push_back(std::move(container));
    return make({kind, static_cast<std::uint16_t>(nesting + 1),
                 static_cast<std::uint32_t>(containers_.size() - 1), 0});
  }
  void check_nesting(std::size_t nesting) const {
    if (nesting > limits_.max_nesting) {
      fail("containers nested more than " + std::to_string(limits_.max_nesting) +
           " deep (the limit)");
    }
  }
  const Value& value(Ref ref) const { return values_[ref]; }
  const std::string& text(Ref ref) const { return strings_[value(ref).index]; }
  Container& container(Ref ref) { return containers_[value(ref).index]; }
  // `parent` now holds `child`: its nesting covers the child's.
  void nest(Ref parent, Ref child) {
    const std::size_t nesting = value(child).nesting + 1u;
    check_nesting(nesting);
    values_[parent].nesting =
        static_cast<std::uint16_t>(std::max<std::size_t>(values_[parent].nesting, nesting));
  }

  // ---- the stack
  std::size_t mark_base() const { return marks_.empty() ? 0 : marks_.back(); }
  void push(Ref ref) {
    if (stack_.size() >= limits_.max_stack) {
      fail("more than " + std::to_string(limits_.max_stack) + " values on the stack (the limit)");
    }
    stack_.push_back(ref);
  }
  Ref pop() {
    if (stack_.size() <= mark_base()) fail("the stack is empty");
    const Ref ref = stack_.back();
    stack_.pop_back();
    return ref;
  }
  Ref top() const {
    if (stack_.size() <= mark_base()) fail("the stack is empty");
    return stack_.back();
  }
  std::vector<Ref> pop_mark() {
    if (marks_.empty()) fail("no MARK to take values back to");
    std::vector<Ref> items(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()),
                           stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }

  // ---- memo
  void memo_put(std::uint64_t index) {
    if (index >= limits_.max_memo_entries) {
      fail("memo index " + std::to_string(index) + " is past the limit of " +
           plural(limits_.max_memo_entries, "memo entry"));
    }
    if (index >= memo_.size()) memo_.resize(static_cast<std::size_t>(index) + 1, kNoRef);
    if (memo_[index] == kNoRef) ++memo_count_;
    memo_[index] = top();
  }
  void memo_get(std::uint64_t index) {
    if (index >= memo_.size() || memo_[index] == kNoRef) {
      fail("memo index " + std::to_string(index) + " was never set");
    }
    push(memo_[index]);
  }

  // ---- operations
  void step(std::uint8_t op);
  void global(const std::string& module, const std::string& name);
  void reduce();
  void build();
  void persistent_id();
  void set_item(Ref dict, Ref key, Ref item);
  std::string dict_key(Ref key) const;
  std::int64_t integer(Ref ref, const std::string& what) const;
  std::vector<std::int64_t> integers(Ref ref, const std::string& what) const;
  const std::vector<Ref>& tuple_items(Ref ref, const std::string& what);
  Ref rebuild_tensor(const std::vector<Ref>& args, const char* function);
  StateDict result(Ref root);
  Tensor check_tensor(const std::string& name, const PendingTensor& pending,
                      std::vector<std::size_t>& storage_order, StateDict& out) const;

  std::span<const std::uint8_t> bytes_;
  const Limits& limits_;
  std::size_t at_ = 0;
  std::size_t op_at_ = 0;
  std::uint8_t op_ = 0;
  std::vector<Value> values_;
  std::vector<std::string> strings_;
  std::vector<Container> containers_;
  std::vector<Global> globals_;
  std::vector<PendingTensor> tensors_;
  std::vector<Storage> storages_;
  std::map<std::string, std::size_t> storage_keys_;
  std::vector<Ref> stack_;
  std::vector<std::size_t> marks_;
  std::vector<Ref> memo_;  // by index (below max_memo_entries); kNoRef where never set
  std::size_t memo_count_ = 0;
};

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
    fail(what + " has " + plural(items.size(), "dimension") + ", more than the limit of " +
         std::to_string(limits_.max_rank));
  }
  std::vector<std::int64_t> out;
  for (const Ref item : items) out.push_back(integer(item, what + "'s entries"));
  return out;
}

void Machine::global(const std::string& module, const std::string& name) {
  std::optional<Global> allowed = allowed_global(module, name);
  if (!allowed) {
    fail("the pickle names " + printable(module) + "." + printable(name) +
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
    fail("more than " + plural(limits_.max_tensors, "tensor") + " (the limit)");
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
      fail(global.path + " is given " + plural(args.size(), "argument") + ", expected " +
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
         (v.kind == Kind::Tuple ? " of " + plural(containers_[v.index].items.size(), "item")
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
    fail("a persistent id of kind " + quoted(tag) + ": a weights-only load reads only storages");
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
    fail("a storage key or location of " + plural(std::max(key.size(), location.size()), "byte") +
         " (1 to 256 are read)");
  }
  const std::int64_t elements = integer(items[4], "a storage's element count");
  const std::size_t size = dtype_size(dtype);
  if (elements < 0 || std::uint64_t(elements) > (kMaxBytes - 1) / size) {
    fail("storage " + quoted(key) + " claims " + std::to_string(elements) + " " +
         dtype_name(dtype) + " values, which is negative or overflows");
  }
  const auto [found, added] = storage_keys_.try_emplace(key, storages_.size());
  if (added) {
    storages_.push_back({key, dtype, std::uint64_t(elements), location});
  } else {
    const Storage& known = storages_[found->second];
    if (known.dtype != dtype || known.elements != std::uint64_t(elements)) {
      fail("storage " + quoted(key) + " is named as " + plural(known.elements, "value") + " of " +
           dtype_name(known.dtype) + " and as " + plural(std::uint64_t(elements), "value") +
           " of " + dtype_name(dtype));
    }
  }
  push(make({Kind::Storage, 0, static_cast<std::uint32_t>(found->second), 0}));
}

void Machine::step(std::uint8_t op) {
  switch (op) {
    case PROTO: {
      const std::uint64_t version = little(1);
      if (version > 5) fail("pickle protocol " + std::to_string(version) + " (at most 5 is read)");
      break;
    }
    case FRAME: {
      const std::uint64_t length = little(8);
      if (length > bytes_.size() - at_) fail("a frame runs past the end (it is truncated)");
      break;
    }
    case STOP:
      break;  // handled by run()
    case MARK:
      if (marks_.size() >= limits_.max_marks) {
        fail("more than " + std::to_string(limits_.max_marks) +
             " MARKs open at once (nesting too deep)");
      }
      marks_.push_back(stack_.size());
      break;
    case POP:
      if (stack_.size() > mark_base()) {
        stack_.pop_back();
      } else {
        pop_mark();
      }
      break;
    case POP_MARK:
      pop_mark();
      break;
    case DUP:
      push(top());
      break;
    case NONE:
      push(make({Kind::None}));
      break;
    case NEWTRUE:
      push(make({Kind::Bool, 0, 0, 1}));
      break;
    case NEWFALSE:
      push(make({Kind::Bool, 0, 0, 0}));
      break;
    case BININT:
      push(
          make({Kind::Int, 0, 0, static_cast<std::int64_t>(static_cast<std::int32_t>(little(4)))}));
      break;
    case BININT1:
      push(make({Kind::Int, 0, 0, static_cast<std::int64_t>(little(1))}));
      break;
    case BININT2:
      push(make({Kind::Int, 0, 0, static_cast<std::int64_t>(little(2))}));
      break;
    case LONG1: {
      const std::uint64_t length = little(1);
      if (length > 8) {
        fail("an integer of " + plural(length, "byte") + " (more than 64 bits are not read)");
      }
      std::uint64_t number = length == 0 ? 0 : little(length);
      if (length > 0 && length < 8 && (number >> (8 * length - 1)) != 0) {
        number |= ~std::uint64_t{0} << (8 * length);  // sign-extend
      }
      push(make({Kind::Int, 0, 0, static_cast<std::int64_t>(number)}));
      break;
    }
    case BINFLOAT: {
      const auto field = take(8);
      std::uint64_t bits = 0;
      for (const std::uint8_t b : field) bits = (bits << 8) | b;  // big-endian
      push(make({Kind::Float, 0, 0, static_cast<std::int64_t>(bits)}));
      break;
    }
    case SHORT_BINSTRING:
      push(make_text(Kind::String, little(1)));
      break;
    case BINSTRING:
      push(make_text(Kind::String, little(4)));
      break;
    case SHORT_BINUNICODE:
      push(make_text(Kind::String, little(1)));
      break;
    case BINUNICODE:
      push(make_text(Kind::String, little(4)));
      break;
    case BINUNICODE8:
      push(make_text(Kind::String, little(8)));
      break;
    case SHORT_BINBYTES:
      push(make_text(Kind::Bytes, little(1)));
      break;
    case BINBYTES:
      push(make_text(Kind::Bytes, little(4)));
      break;
    case BINBYTES8:
      push(make_text(Kind::Bytes, little(8)));
      break;
    case EMPTY_TUPLE:
      push(make_container(Kind::Tuple, {}));
      break;
    case EMPTY_LIST:
      push(make_container(Kind::List, {}));
      break;
    case EMPTY_DICT:
      push(make_container(Kind::Dict, {}));
      break;
    case TUPLE:
      push(make_container(Kind::Tuple, pop_mark()));
      break;
    case TUPLE1:
    case TUPLE2:
    case TUPLE3: {
      std::vector<Ref> items(op - TUPLE1 + 1);
      for (std::size_t i = items.size(); i-- > 0;) items[i] = pop();
      push(make_container(Kind::Tuple, std::move(items)));
      break;
    }
    case APPEND:
    case APPENDS: {
      const std::vector<Ref> items = op == APPEND ? std::vector<Ref>{pop()} : pop_mark();
      const Ref list = top();
      if (value(list).kind != Kind::List) {
        fail(std::string("appending to ") + kind_name(value(list).kind) + ", not a list");
      }
      for (const Ref item : items) {
        nest(list, item);
        container(list).items.push_back(item);
      }
      break;
    }
    case SETITEM: {
      const Ref item = pop();
      const Ref key = pop();
      set_item(top(), key, item);
      break;
    }
    case SETITEMS: {
      const std::vector<Ref> items = pop_mark();
      if (items.size() % 2 != 0) fail("SETITEMS with an odd number of values");
      const Ref dict = top();
      for (std::size_t i = 0; i < items.size(); i += 2) set_item(dict, items[i], items[i + 1]);
      break;
    }
    case BINPUT:
      memo_put(little(1));
      break;
    case LONG_BINPUT:
      memo_put(little(4));
      break;
    case MEMOIZE:
      memo_put(memo_count_);  // MEMOIZE: the next index is len(memo)
      break;
    case BINGET:
      memo_get(little(1));
      break;
    case LONG_BINGET:
      memo_get(little(4));
      break;
    case GLOBAL: {
      const std::string module = line();
      const std::string name = line();
      global(module, name);
      break;
    }
    case STACK_GLOBAL: {
      const Ref name = pop();
      const Ref module = pop();
      if (value(name).kind != Kind::String || value(module).kind != Kind::String) {
        fail("STACK_GLOBAL's module and name must be strings");
      }
      global(text(module), text(name));
      break;
    }
    case REDUCE:
      reduce();
      break;
    case BUILD:
      build();
      break;
    case BINPERSID:
      persistent_id();
      break;
    default: {
      const char* name = op_name(op);
      if (name != nullptr) {
        fail(std::string("opcode ") + name + " (" + hex_byte(op) +
             "), which torch.save does not emit and a weights-only load does not run");
      }
      fail("an unknown opcode " + hex_byte(op));
    }
  }
}

Tensor Machine::check_tensor(const std::string& name, const PendingTensor& pending,
                             std::vector<std::size_t>& storage_order, StateDict& out) const {
  const Storage& storage = storages_[pending.storage];
  const std::string label = "data.pkl: tensor " + quoted(name);
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
                  " of its storage " + quoted(storage.key) + ", which holds " +
                  plural(storage.elements, std::string(dtype_name(storage.dtype)) + " value") +
                  ": it runs past its storage");
    }
    std::uint64_t expected = 1;
    for (std::size_t d = tensor.shape.size(); d-- > 0;) {
      if (tensor.shape[d] != 1 && tensor.strides[d] != expected) tensor.contiguous = false;
      expected *= tensor.shape[d];
    }
  } else if (tensor.storage_offset > storage.elements) {
    throw Error(label + layout + " starts past the end of its storage " + quoted(storage.key) +
                " (" + plural(storage.elements, "value") + ")");
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
      throw Error("data.pkl: state dict entry " + quoted(name) + " is " + kind_name(tensor.kind) +
                  ", not a tensor");
    }
    out.tensors.push_back(check_tensor(name, tensors_[tensor.index], storage_order, out));
  }
  return out;
}

StateDict Machine::run() {
  if (bytes_.size() > limits_.max_pickle_bytes) {
    throw Error("data.pkl: the pickle is " + plural(bytes_.size(), "byte") +
                ", more than the limit of " + plural(limits_.max_pickle_bytes, "byte"));
  }
  for (std::size_t operations = 0;; ++operations) {
    if (at_ >= bytes_.size()) {
      throw Error("data.pkl: the pickle ends at byte " + std::to_string(at_) +
                  " without STOP (it is truncated)");
    }
    if (operations >= limits_.max_operations) {
      throw Error("data.pkl: more than " + std::to_string(limits_.max_operations) +
                  " operations (the limit)");
    }
    op_at_ = at_;
    op_ = bytes_[at_++];
    if (op_ == STOP) break;
    step(op_);
  }
  const Ref root = pop();
  if (at_ != bytes_.size()) {
    fail(plural(bytes_.size() - at_, "byte") + " follow STOP");
  }
  return result(root);
}

}  // namespace

const char* dtype_name(DType dtype) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.dtype == dtype) return info.name;
  }
  return "unknown";
}

std::size_t dtype_size(DType dtype) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.dtype == dtype) return info.size;
  }
  return 1;
}

StateDict read_state_dict(std::span<const std::uint8_t> pickle, const Limits& limits) {
  Machine machine(pickle, limits);
  return machine.run();
}

}  // namespace attn::pickle
