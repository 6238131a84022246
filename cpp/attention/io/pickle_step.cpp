// The weights-only unpickler's interpreter: the opcodes it reads, one at a time, until STOP.
#include <string>

#include "attention/io/pickle_machine.hpp"

namespace attn::pickle::detail {

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
        fail("an integer of " + count_text(length, "byte") + " (more than 64 bits are not read)");
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

StateDict Machine::run() {
  if (bytes_.size() > limits_.max_pickle_bytes) {
    throw Error("data.pkl: the pickle is " + count_text(bytes_.size(), "byte") +
                ", more than the limit of " + count_text(limits_.max_pickle_bytes, "byte"));
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
    fail(count_text(bytes_.size() - at_, "byte") + " follow STOP");
  }
  return result(root);
}

}  // namespace attn::pickle::detail
