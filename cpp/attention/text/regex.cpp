// The pre-tokenizer patterns' regex matcher, see regex.hpp.
#include "attention/text/regex.hpp"

#include <limits>
#include <utility>

#include "attention/error.hpp"
#include "attention/text/unicode_classes.hpp"
#include "attention/utf8.hpp"

namespace attn {

bool is_white_space(char32_t cp) {
  return (is_js_space(cp) && cp != 0xFEFF) || cp == 0x85;
}

namespace {

constexpr std::size_t kUnbounded = std::numeric_limits<std::size_t>::max();

bool is_ascii_letter(char32_t cp) {
  return (cp >= U'a' && cp <= U'z') || (cp >= U'A' && cp <= U'Z');
}

char32_t swap_ascii_case(char32_t cp) {
  return cp ^ 0x20;  // only for ASCII letters
}

std::string utf8_of(std::u32string_view text) {
  std::string out;
  for (const char32_t cp : text) append_utf8(out, cp);
  return out;
}

}  // namespace

bool Regex::CharSet::test_positive(char32_t cp) const {
  for (const ClassItem& item : items) {
    bool in = false;
    switch (item.kind) {
      case ClassItem::kRange:
        in = cp >= item.first && cp <= item.last;
        break;
      case ClassItem::kLetter:
        in = is_letter(cp);
        break;
      case ClassItem::kNumber:
        in = is_number(cp);
        break;
      case ClassItem::kSpace:
        in = is_white_space(cp);
        break;
    }
    if (in != item.negated) return true;
  }
  return false;
}

bool Regex::CharSet::test(char32_t cp) const {
  bool in = test_positive(cp);
  if (!in && fold_ascii && is_ascii_letter(cp)) in = test_positive(swap_ascii_case(cp));
  return in != negated;
}

// The pattern as a tree, before it is compiled into nodes that each know their continuation.
struct Regex::Term {
  enum Kind { kSet, kSeq, kAlt, kLook } kind = kSeq;
  CharSet set;
  std::size_t min = 1, max = 1;
  std::vector<Term> children;
  bool negative = false;
};

class Regex::Parser {
 public:
  explicit Parser(std::string_view pattern)
      : source_(pattern), text_(decode_utf8_replacing(pattern)) {}

  Term parse() {
    Term term = alternation(false);
    if (pos_ < text_.size()) fail("an unmatched ')'");
    return term;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("the regex '" + std::string(source_) + "' has " + what + " at character " +
                std::to_string(pos_ + 1) + ", which this tokenizer does not support");
  }

  bool at(char32_t c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool starts(std::u32string_view prefix) const {
    return text_.substr(pos_, prefix.size()) == prefix;
  }

  Term alternation(bool fold) {
    Term alt;
    alt.kind = Term::kAlt;
    alt.children.push_back(sequence(fold));
    while (at(U'|')) {
      ++pos_;
      alt.children.push_back(sequence(fold));
    }
    return alt;
  }

  Term sequence(bool fold) {
    Term seq;
    seq.kind = Term::kSeq;
    while (pos_ < text_.size() && !at(U'|') && !at(U')')) {
      Term atom_term = atom(fold);
      quantifier(atom_term);
      seq.children.push_back(std::move(atom_term));
    }
    return seq;
  }

  Term atom(bool fold) {
    const char32_t c = text_[pos_];
    if (c == U'(') return group(fold);
    if (c == U'[') return char_class(fold);
    Term term;
    term.kind = Term::kSet;
    term.set.fold_ascii = fold;
    if (c == U'\\') {
      term.set.items.push_back(escape());
      return term;
    }
    switch (c) {
      case U'.':
        fail("'.'");
      case U'^':
        fail("the anchor '^'");
      case U'$':
        fail("the anchor '$'");
      case U'*':
      case U'+':
      case U'?':
        fail("a quantifier with nothing to repeat");
      case U'{':
      case U'}':
      case U']':
        fail(std::string("a bare '") + char(c) + "'");
      default:
        break;
    }
    ++pos_;
    term.set.items.push_back({ClassItem::kRange, false, c, c});
    return term;
  }

  Term group(bool fold) {
    Term term;
    if (starts(U"(?:")) {
      pos_ += 3;
      term = alternation(fold);
    } else if (starts(U"(?i:")) {
      pos_ += 4;
      term = alternation(true);
    } else if (starts(U"(?=") || starts(U"(?!")) {
      term.kind = Term::kLook;
      term.negative = text_[pos_ + 2] == U'!';
      pos_ += 3;
      term.children.push_back(alternation(fold));
    } else if (starts(U"(?")) {
      fail("the group '" + utf8_of(text_.substr(pos_, 3)) + "'");
    } else {
      ++pos_;  // a capturing group: the split needs no captures
      term = alternation(fold);
    }
    if (!at(U')')) fail("an unclosed group");
    ++pos_;
    return term;
  }

  Term char_class(bool fold) {
    const std::size_t start = pos_;
    ++pos_;
    Term term;
    term.kind = Term::kSet;
    term.set.fold_ascii = fold;
    if (at(U'^')) {
      term.set.negated = true;
      ++pos_;
    }
    bool first = true;
    while (true) {
      if (pos_ >= text_.size()) {
        pos_ = start;
        fail("an unclosed class");
      }
      const char32_t c = text_[pos_];
      if (c == U']' && !first) break;
      if (c == U'[') fail("a nested class or POSIX bracket");
      if (c == U'&' && starts(U"&&")) fail("a class intersection '&&'");
      if (c == U']') fail("an empty class");
      ClassItem item = class_atom();
      if (at(U'-') && pos_ + 1 < text_.size() && text_[pos_ + 1] != U']') {
        ++pos_;
        const ClassItem last = class_atom();
        const bool single = item.kind == ClassItem::kRange && item.first == item.last &&
                            last.kind == ClassItem::kRange && last.first == last.last;
        if (!single || last.first < item.first)
          fail("a range that is not from one character to a later one");
        item.last = last.first;
      }
      term.set.items.push_back(item);
      first = false;
    }
    ++pos_;
    return term;
  }

  ClassItem class_atom() {
    if (at(U'\\')) return escape();
    const char32_t c = text_[pos_++];
    return {ClassItem::kRange, false, c, c};
  }

  ClassItem escape() {
    if (pos_ + 1 >= text_.size()) fail("a trailing '\\'");
    const char32_t c = text_[pos_ + 1];
    const auto single = [&](char32_t cp) {
      pos_ += 2;
      return ClassItem{ClassItem::kRange, false, cp, cp};
    };
    switch (c) {
      case U'r':
        return single(U'\r');
      case U'n':
        return single(U'\n');
      case U't':
        return single(U'\t');
      case U'f':
        return single(U'\f');
      case U'v':
        return single(U'\v');
      case U's':
      case U'S':
        pos_ += 2;
        return {ClassItem::kSpace, c == U'S', 0, 0};
      case U'p':
      case U'P': {
        const std::size_t close = text_.find(U'}', pos_);
        if (pos_ + 2 >= text_.size() || text_[pos_ + 2] != U'{' || close == std::u32string::npos) {
          fail("'\\" + std::string(1, char(c)) + "' without {name}");
        }
        const std::u32string name = text_.substr(pos_ + 3, close - pos_ - 3);
        ClassItem item;
        if (name == U"L") {
          item.kind = ClassItem::kLetter;
        } else if (name == U"N") {
          item.kind = ClassItem::kNumber;
        } else {
          fail("the property '\\" + std::string(1, char(c)) + "{" + utf8_of(name) +
               "}' (supported: \\p{L}, \\p{N})");
        }
        item.negated = c == U'P';
        pos_ = close + 1;
        return item;
      }
      default:
        break;
    }
    const bool punctuation = c < 0x80 && !((c >= U'0' && c <= U'9') || is_ascii_letter(c));
    if (!punctuation) fail("the escape '\\" + utf8_of(std::u32string(1, c)) + "'");
    return single(c);
  }

  void quantifier(Term& term) {
    if (pos_ >= text_.size()) return;
    std::size_t min = 1, max = 1;
    const char32_t c = text_[pos_];
    if (c == U'?') {
      min = 0;
    } else if (c == U'*') {
      min = 0;
      max = kUnbounded;
    } else if (c == U'+') {
      max = kUnbounded;
    } else if (c == U'{') {
      const std::size_t save = pos_;
      ++pos_;
      min = number();
      max = min;
      if (at(U',')) {
        ++pos_;
        max = at(U'}') ? kUnbounded : number();
      }
      if (!at(U'}') || max < min) {
        pos_ = save;
        fail("a malformed {n,m} quantifier");
      }
    } else {
      return;
    }
    if (term.kind != Term::kSet) fail("a quantifier on a group");
    ++pos_;
    if (at(U'?') || at(U'+') || at(U'*') || at(U'{'))
      fail("a lazy, possessive or repeated quantifier");
    term.min = min;
    term.max = max;
  }

  std::size_t number() {
    std::size_t value = 0;
    const std::size_t begin = pos_;
    while (pos_ < text_.size() && text_[pos_] >= U'0' && text_[pos_] <= U'9' && pos_ - begin < 6) {
      value = value * 10 + (text_[pos_] - U'0');
      ++pos_;
    }
    if (pos_ == begin) fail("a malformed {n,m} quantifier");
    return value;
  }

  std::string_view source_;
  std::u32string text_;
  std::size_t pos_ = 0;
};

namespace {

// Appends the nodes of `term`, each continuing at `next`; returns the first.
template <class Node, class Term>
int compile(std::vector<Node>& nodes, const Term& term, int next) {
  switch (term.kind) {
    case Term::kSet: {
      Node node;
      node.kind = Node::kSet;
      node.set = term.set;
      node.min = term.min;
      node.max = term.max;
      node.next = next;
      nodes.push_back(std::move(node));
      return int(nodes.size() - 1);
    }
    case Term::kSeq:
      for (auto it = term.children.rbegin(); it != term.children.rend(); ++it) {
        next = compile(nodes, *it, next);
      }
      return next;
    case Term::kAlt: {
      if (term.children.size() == 1) return compile(nodes, term.children[0], next);
      std::vector<int> branches;
      for (const Term& child : term.children) branches.push_back(compile(nodes, child, next));
      Node node;
      node.kind = Node::kAlt;
      node.branches = std::move(branches);
      nodes.push_back(std::move(node));
      return int(nodes.size() - 1);
    }
    case Term::kLook: {
      nodes.push_back(Node{});  // the lookahead's own accept
      const int body = compile(nodes, term.children[0], int(nodes.size() - 1));
      Node node;
      node.kind = Node::kLook;
      node.body = body;
      node.negative = term.negative;
      node.next = next;
      nodes.push_back(std::move(node));
      return int(nodes.size() - 1);
    }
  }
  return next;
}

}  // namespace

Regex::Regex(std::string_view pattern) {
  const Term term = Parser(pattern).parse();
  nodes_.push_back(Node{});  // the match's accept
  start_ = compile(nodes_, term, 0);
}

std::size_t Regex::run(int index, std::u32string_view text, std::size_t pos) const {
  const Node& node = nodes_[std::size_t(index)];
  switch (node.kind) {
    case Node::kAccept:
      return pos;
    case Node::kSet: {
      std::size_t count = 0;
      while (count < node.max && pos + count < text.size() && node.set.test(text[pos + count])) {
        ++count;
      }
      if (count < node.min) return npos;
      for (std::size_t c = count;; --c) {  // greedy: the longest run first, then give back
        const std::size_t end = run(node.next, text, pos + c);
        if (end != npos) return end;
        if (c == node.min) return npos;
      }
    }
    case Node::kAlt:
      for (const int branch : node.branches) {
        const std::size_t end = run(branch, text, pos);
        if (end != npos) return end;
      }
      return npos;
    case Node::kLook: {
      const bool found = run(node.body, text, pos) != npos;
      return found != node.negative ? run(node.next, text, pos) : npos;
    }
  }
  return npos;
}

std::size_t Regex::match_at(std::u32string_view text, std::size_t pos) const {
  return run(start_, text, pos);
}

std::vector<std::pair<std::size_t, std::size_t>> Regex::find_all(std::u32string_view text) const {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t start = pos;
    std::size_t end = npos;
    for (; start <= text.size(); ++start) {
      end = match_at(text, start);
      if (end != npos) break;
    }
    if (end == npos) break;
    spans.emplace_back(start, end);
    pos = end > start ? end : start + 1;
  }
  return spans;
}

std::vector<std::u32string> Regex::split_isolated(std::u32string_view text) const {
  std::vector<std::u32string> pieces;
  std::size_t prev = 0;
  for (const auto& [start, end] : find_all(text)) {
    if (start > prev) pieces.emplace_back(text.substr(prev, start - prev));
    if (end > start) pieces.emplace_back(text.substr(start, end - start));
    prev = end;
  }
  if (prev < text.size()) pieces.emplace_back(text.substr(prev));
  return pieces;
}

}  // namespace attn
