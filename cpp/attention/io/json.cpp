// The strict JSON reader of json.hpp: a recursive-descent parser with a nesting limit.
#include "attention/io/json.hpp"

#include <cstdlib>
#include <string>
#include <utility>

#include "attention/error.hpp"
#include "attention/utf8.hpp"

namespace attn::json {

double Number::value() const {
  return std::strtod(text.c_str(), nullptr);
}

const char* kind_name(const Value& value) {
  static constexpr const char* kNames[] = {"null",     "a boolean", "a number",
                                           "a string", "an array",  "an object"};
  return kNames[value.data.index()];
}

const Value* find(const Object& object, std::string_view key) {
  for (const Member& member : object) {
    if (member.key == key) return &member.value;
  }
  return nullptr;
}

namespace {

// Strict RFC 8259 recursive-descent parser with a nesting limit. Works on bytes that were
// already checked to be valid UTF-8.
class Parser {
 public:
  Parser(std::string_view text, const Source& source) : text_(text), source_(source) {}

  Value parse_document() {
    skip_whitespace();
    Value value = parse_value(0);
    skip_whitespace();  // also accepts the writer's space padding
    if (pos_ != text_.size()) error("unexpected content after the JSON value");
    return value;
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    throw Error(std::string(source_.prefix) + " at byte " + std::to_string(pos_) + ": " + what);
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  void skip_whitespace() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      ++pos_;
    }
  }

  void expect(char c) {
    if (at_end())
      error(std::string("expected '") + c + "' but the " + std::string(source_.document) +
            " ended");
    if (peek() != c) error(std::string("expected '") + c + "'");
    ++pos_;
  }

  Value parse_value(int depth) {
    if (at_end())
      error("unexpected end of " + std::string(source_.document) + ", expected a value");
    switch (peek()) {
      case '{':
        return parse_object(depth + 1);
      case '[':
        return parse_array(depth + 1);
      case '"':
        return Value{parse_string()};
      case 't':
        return parse_literal("true", Value{true});
      case 'f':
        return parse_literal("false", Value{false});
      case 'n':
        return parse_literal("null", Value{nullptr});
      default:
        return Value{parse_number()};
    }
  }

  void check_depth(int depth) const {
    if (depth > kMaxDepth) {
      error("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    }
  }

  // `open`, then elements read by parse_element() separated by commas, then `close` (an empty
  // sequence allowed); the error positions and messages of a hand-written loop.
  template <class ParseElement>
  void parse_sequence(char open, char close, int depth, ParseElement parse_element) {
    check_depth(depth);
    expect(open);
    skip_whitespace();
    if (peek() == close) {
      ++pos_;
      return;
    }
    while (true) {
      skip_whitespace();
      parse_element();
      skip_whitespace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(close);
      return;
    }
  }

  Value parse_object(int depth) {
    Object members;
    parse_sequence('{', '}', depth, [&] {
      if (peek() != '"') error("expected a string key");
      std::string key = parse_string();
      skip_whitespace();
      expect(':');
      skip_whitespace();
      members.push_back(Member{std::move(key), parse_value(depth)});
    });
    return Value{std::move(members)};
  }

  Value parse_array(int depth) {
    Array elements;
    parse_sequence('[', ']', depth, [&] { elements.push_back(parse_value(depth)); });
    return Value{std::move(elements)};
  }

  Value parse_literal(std::string_view word, Value value) {
    if (text_.substr(pos_, word.size()) != word) error("invalid literal");
    pos_ += word.size();
    return value;
  }

  std::string parse_string() {
    expect('"');
    std::string out;
    while (true) {
      if (at_end()) error("unterminated string");
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) error("control character in a string");
      if (c == '\\') {
        parse_escape(out);
      } else {
        out += c;
        ++pos_;
      }
    }
  }

  void parse_escape(std::string& out) {
    ++pos_;  // the backslash
    if (at_end()) error("unterminated escape sequence");
    const char c = text_[pos_++];
    switch (c) {
      case '"':
        out += '"';
        return;
      case '\\':
        out += '\\';
        return;
      case '/':
        out += '/';
        return;
      case 'b':
        out += '\b';
        return;
      case 'f':
        out += '\f';
        return;
      case 'n':
        out += '\n';
        return;
      case 'r':
        out += '\r';
        return;
      case 't':
        out += '\t';
        return;
      case 'u':
        append_utf8(out, parse_unicode_escape());
        return;
      default:
        --pos_;
        error(std::string("invalid escape '\\") + c + "'");
    }
  }

  // After "\u": four hex digits, and for a high surrogate a following "\uDC00".."\uDFFF".
  std::uint32_t parse_unicode_escape() {
    const std::uint32_t unit = parse_hex4();
    if (unit >= 0xDC00 && unit <= 0xDFFF) error("unpaired low surrogate in \\u escape");
    if (unit < 0xD800 || unit > 0xDBFF) return unit;
    if (text_.substr(pos_, 2) != "\\u") error("high surrogate not followed by a \\u low surrogate");
    pos_ += 2;
    const std::uint32_t low = parse_hex4();
    if (low < 0xDC00 || low > 0xDFFF) error("high surrogate not followed by a low surrogate");
    return 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
  }

  std::uint32_t parse_hex4() {
    std::uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      if (at_end()) error("truncated \\u escape");
      const char c = text_[pos_];
      std::uint32_t digit = 0;
      if (c >= '0' && c <= '9') {
        digit = static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        digit = static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        digit = static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        error("invalid hex digit in \\u escape");
      }
      value = value * 16 + digit;
      ++pos_;
    }
    return value;
  }

  bool at_digit() const { return !at_end() && peek() >= '0' && peek() <= '9'; }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  Number parse_number() {
    const std::size_t start = pos_;
    Number number;
    if (peek() == '-') {
      number.negative = true;
      ++pos_;
    }
    if (!at_digit()) error("unexpected character, expected a value");
    if (peek() == '0') {
      ++pos_;
      if (at_digit()) error("leading zero in a number");
    } else {
      while (at_digit()) accumulate_digit(number);
    }
    if (peek() == '.') {
      ++pos_;
      number.integral = false;
      if (!at_digit()) error("expected a digit after the decimal point");
      while (at_digit()) ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      number.integral = false;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!at_digit()) error("expected a digit in the exponent");
      while (at_digit()) ++pos_;
    }
    number.exact = number.exact && number.integral;
    number.text = std::string(text_.substr(start, pos_ - start));
    return number;
  }

  void accumulate_digit(Number& number) {
    const auto digit = static_cast<std::uint64_t>(text_[pos_++] - '0');
    if (!number.exact) return;
    number.magnitude = number.magnitude * 10 + digit;  // cannot overflow: magnitude <= 2^53 here
    if (number.magnitude > kMaxExactInteger) number.exact = false;
  }

  std::string_view text_;
  Source source_;
  std::size_t pos_ = 0;
};

}  // namespace

Value parse(std::string_view text, const Source& source) {
  return Parser(text, source).parse_document();
}

}  // namespace attn::json
