// The weights-only unpickler (attn::pickle::read_state_dict) on pickles written here opcode by
// opcode (CPython's Lib/pickle.py opcodes): the tensors it describes, Python's dict semantics,
// every limit, and every cut-short data.pkl of the torch.save files refused with attn::Error.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/io/pickle.hpp"
#include "test_support.hpp"

using attn::pickle::DType;
using attn::pickle::Limits;
using attn::pickle::read_state_dict;
using Catch::Matchers::ContainsSubstring;

namespace {

// Appends pickle opcodes; starts with PROTO 2 as torch.save does.
struct Writer {
  std::vector<std::uint8_t> out{0x80, 0x02};

  Writer& op(std::initializer_list<std::uint8_t> bytes) {
    out.insert(out.end(), bytes);
    return *this;
  }
  Writer& raw(const std::string& text) {
    out.insert(out.end(), text.begin(), text.end());
    return *this;
  }
  Writer& u32(std::uint32_t value) {
    for (int i = 0; i < 4; ++i) out.push_back(std::uint8_t(value >> (8 * i)));
    return *this;
  }
  Writer& mark() { return op({'('}); }
  Writer& tuple() { return op({'t'}); }
  Writer& stop() { return op({'.'}); }
  Writer& reduce() { return op({'R'}); }
  Writer& setitems() { return op({'u'}); }
  Writer& str(const std::string& text) {
    op({'X'}).u32(std::uint32_t(text.size()));
    return raw(text);
  }
  Writer& global(const std::string& module, const std::string& name) {
    return op({'c'}).raw(module + "\n" + name + "\n");
  }
  Writer& small(std::uint8_t value) { return op({'K', value}); }
  Writer& ints(std::initializer_list<std::uint8_t> values) {
    mark();
    for (const std::uint8_t v : values) small(v);
    return tuple();
  }
  Writer& ordered_dict() { return global("collections", "OrderedDict").op({')'}).reduce(); }
  Writer& storage(const std::string& key, const std::string& type, std::uint8_t elements) {
    mark().str("storage").global("torch", type).str(key).str("cpu").small(elements).tuple();
    return op({'Q'});
  }
  // _rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict())
  Writer& tensor(const std::string& key, std::uint8_t offset,
                 std::initializer_list<std::uint8_t> size,
                 std::initializer_list<std::uint8_t> stride,
                 const std::string& type = "FloatStorage", std::uint8_t elements = 12) {
    global("torch._utils", "_rebuild_tensor_v2").mark();
    storage(key, type, elements).small(offset).ints(size).ints(stride).op({0x89}).ordered_dict();
    return tuple().reduce();
  }
};

std::vector<std::uint8_t> one_tensor(std::uint8_t offset, std::initializer_list<std::uint8_t> size,
                                     std::initializer_list<std::uint8_t> stride) {
  Writer w;
  w.ordered_dict().mark().str("w").tensor("0", offset, size, stride).setitems().stop();
  return w.out;
}

}  // namespace

TEST_CASE("a state dict's tensors: dtype, shape, strides, storage and offset", "[pickle]") {
  Writer w;
  w.ordered_dict().mark();
  w.str("a").tensor("0", 0, {3, 4}, {4, 1});                  // the whole storage
  w.str("b").tensor("0", 4, {2, 4}, {4, 1});                  // rows 1..3: an offset
  w.str("c").tensor("0", 1, {4, 2}, {1, 4});                  // a transposed slice
  w.str("d").tensor("1", 0, {2}, {1}, "BFloat16Storage", 2);  // another storage
  w.str("e").tensor("0", 2, {}, {});                          // rank 0
  w.setitems().stop();
  const auto state = read_state_dict(w.out);
  REQUIRE(state.tensors.size() == 5);
  REQUIRE(state.storages.size() == 2);
  CHECK(state.storages[0].key == "0");
  CHECK(state.storages[0].dtype == DType::F32);
  CHECK(state.storages[0].elements == 12);
  CHECK(state.storages[0].location == "cpu");
  CHECK(state.storages[1].dtype == DType::BF16);
  CHECK(state.storages[1].byte_size() == 4);
  const auto& a = state.tensors[0];
  CHECK(a.name == "a");
  CHECK(a.shape == std::vector<std::uint64_t>{3, 4});
  CHECK(a.element_count == 12);
  CHECK(a.extent == 12);
  CHECK(a.contiguous);
  const auto& b = state.tensors[1];
  CHECK(b.storage_offset == 4);
  CHECK(b.extent == 8);
  CHECK(b.contiguous);
  const auto& c = state.tensors[2];
  CHECK(c.strides == std::vector<std::uint64_t>{1, 4});
  CHECK(c.extent == 1 + 3 * 1 + 1 * 4);
  CHECK_FALSE(c.contiguous);
  CHECK(state.tensors[3].storage == 1);
  CHECK(state.tensors[3].storage_key == "1");
  CHECK(state.tensors[3].dtype == DType::BF16);
  CHECK(state.tensors[4].shape.empty());
  CHECK(state.tensors[4].element_count == 1);
  CHECK(state.tensors[4].extent == 1);
}

TEST_CASE("dicts follow Python: a repeated key keeps its place and takes the last value",
          "[pickle]") {
  Writer w;
  w.op({'}'}).mark();
  w.str("x").tensor("0", 0, {2}, {1}).str("y").tensor("0", 2, {2}, {1});
  w.str("x").tensor("0", 4, {2}, {1});
  w.setitems().stop();
  const auto state = read_state_dict(w.out);
  REQUIRE(state.tensors.size() == 2);
  CHECK(state.tensors[0].name == "x");
  CHECK(state.tensors[0].storage_offset == 4);
  CHECK(state.tensors[1].name == "y");
}

TEST_CASE("OrderedDict of a list of pairs (Python 2's pickles) and storages named by use",
          "[pickle]") {
  Writer w;
  w.global("collections", "OrderedDict").mark().op({']'}).mark();
  w.mark().str("late").tensor("9", 0, {2}, {1}).tuple();
  w.mark().str("early").tensor("3", 0, {2}, {1}).tuple();
  w.op({'e'}).tuple().reduce().stop();  // APPENDS, then the args tuple (list,)
  const auto state = read_state_dict(w.out);
  REQUIRE(state.tensors.size() == 2);
  CHECK(state.tensors[0].name == "late");
  CHECK(state.storages[0].key == "9");  // in the order tensors name them
  CHECK(state.storages[1].key == "3");
}

TEST_CASE("what the unpickler refuses, each with a readable message", "[pickle]") {
  const auto refuses = [](const std::vector<std::uint8_t>& bytes, const std::string& message,
                          const Limits& limits = {}) {
    INFO("expected: " << message);
    CHECK_THROWS_AS(read_state_dict(bytes, limits), attn::Error);
    CHECK_THROWS_WITH(read_state_dict(bytes, limits), ContainsSubstring(message));
  };
  refuses(Writer().global("subprocess", "Popen").stop().out,
          "data.pkl: the pickle names subprocess.Popen, which a weights-only load refuses");
  refuses(Writer().global("torch", "load").stop().out, "the pickle names torch.load");
  refuses(Writer().global("os\x01", "x").stop().out, "the pickle names os\\x01.x");
  refuses(Writer().op({'N'}).op({'N'}).reduce().stop().out, "REDUCE calls None");
  refuses(Writer().op({'}'}).op({'N'}).op({'N'}).op({'s'}).stop().out,
          "the state dict has a key that is None, not a str");  // a key, but no tensor name
  refuses(Writer().op({'}'}).op({'G'}).op({0, 0, 0, 0, 0, 0, 0, 0}).op({'N'}).op({'s'}).stop().out,
          "a dict key that is a float");
  refuses(Writer().op({']'}).op({'N'}).op({'N'}).op({'s'}).stop().out,
          "setting an item of a list, not a dict");
  refuses(Writer().op({'}'}).op({'N'}).op({'a'}).stop().out, "appending to a dict, not a list");
  refuses(Writer().op({'t'}).stop().out, "no MARK to take values back to (TUPLE at byte 2)");
  refuses(Writer().op({'R'}).stop().out, "the stack is empty (REDUCE at byte 2)");
  refuses(Writer().op({'}'}).mark().op({'N'}).op({'u'}).stop().out, "SETITEMS with an odd number");
  refuses(Writer().op({0x8a, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9}).stop().out,
          "an integer of 9 bytes (more than 64 bits are not read)");
  refuses(Writer().op({'X'}).u32(2).op({0xC0, 0xAF}).stop().out,
          "a string that is not valid UTF-8");
  refuses(Writer().op({0x80, 6}).stop().out, "pickle protocol 6 (at most 5 is read)");
  refuses(Writer().raw("c").raw(std::string(300, 'a')).stop().out, "a GLOBAL line longer than 256");
  refuses(Writer().op({'N'}).stop().out, "the pickle holds None, not a state dict");
  refuses(Writer().ordered_dict().op({'K', 1}).tensor("0", 0, {2}, {1}).op({'s'}).stop().out,
          "the state dict has a key that is an int, not a str");
  // A negative offset, from LONG1's sign.
  Writer negative;
  negative.ordered_dict().mark().str("w").global("torch._utils", "_rebuild_tensor_v2").mark();
  negative.storage("0", "FloatStorage", 6).op({0x8a, 1, 0xff}).ints({2}).ints({1});
  negative.op({0x89}).ordered_dict().tuple().reduce().setitems().stop();
  refuses(negative.out, "tensor 'w' has a negative storage offset");
}

TEST_CASE("the unpickler's limits, each configurable", "[pickle]") {
  Limits limits;
  const auto refused = [&](const std::vector<std::uint8_t>& bytes, const std::string& message) {
    INFO("expected: " << message);
    CHECK_THROWS_WITH(read_state_dict(bytes, limits), ContainsSubstring(message));
  };
  const auto valid = one_tensor(0, {2, 3}, {3, 1});
  CHECK_NOTHROW(read_state_dict(valid, limits));

  // Each limit set alone below what `valid` needs.
  const struct {
    std::size_t Limits::*limit;
    std::size_t value;
    std::string message;
  } alone[] = {
      {&Limits::max_pickle_bytes, valid.size() - 1,
       "more than the limit of " + std::to_string(valid.size() - 1) + " bytes"},
      {&Limits::max_operations, 20, "more than 20 operations (the limit)"},
      {&Limits::max_values, 10, "the pickle makes more than 10 values (the limit)"},
      {&Limits::max_rank, 1, "size has 2 dimensions, more than the limit of 1"},
      {&Limits::max_tensors, 0, "more than 0 tensors (the limit)"},
      {&Limits::max_string_bytes, 5,
       "a string of 7 bytes, more than the limit of 5 bytes"},  // "storage"
      {&Limits::max_marks, 2, "more than 2 MARKs open at once"},
      {&Limits::max_stack, 4, "more than 4 values on the stack (the limit)"},
  };
  for (const auto& row : alone) {
    limits = {};
    limits.*row.limit = row.value;
    refused(valid, row.message);
  }
  limits = {};
  limits.max_memo_entries = 4;
  refused(Writer().op({'N', 'q', 4}).stop().out,
          "memo index 4 is past the limit of 4 memo entries");

  // Lists nested 100 deep through the memo, the stack never deeper than 3 (] h a r 0 repeated).
  limits = {};
  Writer lists;
  lists.op({']', 'q', 0});
  for (std::uint8_t i = 0; i < 100; ++i) {
    lists.op({']', 'h', i, 'a', 'q', std::uint8_t(i + 1), '0'});
  }
  lists.op({'h', 100}).stop();
  refused(lists.out, "containers nested more than 64 deep (the limit)");
  limits.max_nesting = 200;
  refused(lists.out, "the pickle holds a list, not a state dict");  // nesting allowed: now valid
  // A list appended to itself (a cycle) deepens until the limit.
  limits = {};
  Writer cycle;
  cycle.op({']', 'q', 0});
  for (int i = 0; i < 70; ++i) cycle.op({'h', 0, 'a'});
  refused(cycle.stop().out, "containers nested more than 64 deep");
}

TEST_CASE("every cut-short data.pkl of the torch.save files is refused", "[pickle]") {
  const std::string seeds = std::string(ATTN_TEST_DATA_DIR) + "/../fuzz/seeds-torch/";
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(seeds)) {
    const auto bytes = read_file(entry.path().string());
    INFO(entry.path().filename().string());
    CHECK_NOTHROW(read_state_dict(bytes));
    // Every prefix but the whole (a few hundred per file; many-tensors' every 97th).
    const std::size_t step = bytes.size() > 8192 ? 97 : 1;
    for (std::size_t cut = 0; cut < bytes.size(); cut += step) {
      CHECK_THROWS_AS(read_state_dict(std::span(bytes).first(cut)), attn::Error);
    }
    ++files;
  }
  CHECK(files >= 10);
}
