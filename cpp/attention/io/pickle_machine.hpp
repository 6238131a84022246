// The weights-only unpickler's machine (io/pickle.cpp: values, allowed globals, tensors;
// io/pickle_step.cpp: one opcode at a time): internal to those two files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attention/error.hpp"
#include "attention/io/pickle.hpp"
#include "attention/io/pickle_opcodes.hpp"
#include "attention/message_text.hpp"
#include "attention/utf8.hpp"

namespace attn::pickle::detail {

constexpr std::size_t kMaxLineBytes = 256;                   // a GLOBAL's module or name
constexpr std::size_t kMaxKeyBytes = 256;                    // a storage key or location
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 63;  // byte counts stay below this

// "0x8f"
std::string hex_byte(std::uint8_t value);
// "[2, 3]" of a tensor's sizes or strides as the file gave them.
std::string numbers_text(const std::vector<std::int64_t>& values);

struct DTypeInfo {
  DType dtype;
  const char* name;
  std::size_t size;
  const char* storage;  // the torch typed storage holding it
};
inline constexpr DTypeInfo kDTypes[] = {
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

// What a value of this kind is called in messages ("an int", "a dict").
const char* kind_name(Kind kind);

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
// The global `module.name` as the allow-list knows it, or nothing: every other global is refused.
std::optional<Global> allowed_global(const std::string& module, const std::string& name);

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
           count_text(count, "byte") + " (it is truncated)");
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
           count_text(length, "byte") + ", more than the limit of " +
           count_text(limits_.max_string_bytes, "byte"));
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
           count_text(limits_.max_memo_entries, "memo entry"));
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

}  // namespace attn::pickle::detail
