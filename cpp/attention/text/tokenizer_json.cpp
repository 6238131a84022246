// tokenizer.json read into a BpeSpec, see tokenizer_json.hpp.
#include "attention/text/tokenizer_json.hpp"

#include <memory>
#include <utility>

#include "attention/error.hpp"
#include "attention/io/json.hpp"
#include "attention/utf8.hpp"

namespace attn {

namespace {

constexpr std::int64_t kMaxId = (1 << 20) - 1;

constexpr const char* kModels =
    "supported: BPE (byte-level as GPT-2, GPT-NeoX/Pythia, Llama 3, Qwen2/Qwen3, OLMo 2 and "
    "SmolLM2 ship it, or SentencePiece-style as Llama 2, TinyLlama, Mistral, Phi-3 and Gemma)";
constexpr const char* kNormalizers =
    "supported: NFC, Prepend, Replace of a string, and a Sequence of these";
constexpr const char* kPreTokenizers =
    "supported: ByteLevel, Split (Llama 3's or Qwen2's pattern, or a string), Digits, Metaspace, "
    "and a Sequence of these";
constexpr const char* kPostProcessors =
    "supported: TemplateProcessing, ByteLevel, and a Sequence of these";

// The Split patterns this tokenizer knows, as tokenizer.json holds them.
struct KnownPattern {
  const char* name;
  std::string_view pattern;
};
constexpr KnownPattern kPatterns[] = {
    {"Llama 3's", kLlama3SplitPattern},
    {"Qwen2's", kQwen2SplitPattern},
};

std::string quoted(std::string_view text) {
  return "'" + std::string(text.substr(0, 200)) + (text.size() > 200 ? "…'" : "'");
}

// Typed access to a value at a path ("model.vocab"), each error naming the path.
class At {
 public:
  // file: how messages name the file ("tokenizer.json", or "vocab.json").
  At(const json::Value& value, std::string path, const char* file = "tokenizer.json")
      : value_(value), path_(std::move(path)), file_(file) {}

  [[noreturn]] void wrong(const std::string& expected) const {
    throw Error(std::string(file_) + "'s " + path_ + " must be " + expected + ", got " +
                json::kind_name(value_));
  }
  [[noreturn]] void unsupported(const std::string& what, const std::string& supported) const {
    throw Error(std::string(file_) + "'s " + path_ + " " + what + " is not supported; " +
                supported);
  }

  const json::Value& value() const { return value_; }
  const std::string& path() const { return path_; }
  bool null() const { return value_.is_null(); }

  const json::Object& object() const {
    if (!value_.object()) wrong("an object");
    return *value_.object();
  }
  const json::Array& array() const {
    if (!value_.array()) wrong("an array");
    return *value_.array();
  }
  const std::string& string() const {
    if (!value_.string()) wrong("a string");
    return *value_.string();
  }
  bool boolean() const {
    if (!value_.boolean()) wrong("true or false");
    return *value_.boolean();
  }
  std::int32_t id() const {
    const json::Number* number = value_.number();
    if (!number || !number->integral || number->negative || !number->exact ||
        number->magnitude > std::uint64_t(kMaxId)) {
      wrong("a token id (an integer from 0 to " + std::to_string(kMaxId) + ")");
    }
    return std::int32_t(number->magnitude);
  }

  // A member, or nullptr when absent.
  std::unique_ptr<At> member(std::string_view key) const {
    const json::Value* found = json::find(object(), key);
    if (!found) return nullptr;
    return std::make_unique<At>(*found, path_ + "." + std::string(key), file_);
  }
  At need(std::string_view key) const {
    const json::Value* found = json::find(object(), key);
    if (!found) throw Error("tokenizer.json's " + path_ + " has no " + std::string(key));
    return At(*found, path_ + "." + std::string(key), file_);
  }
  At item(std::size_t index) const {
    return At(array()[index], path_ + "[" + std::to_string(index) + "]", file_);
  }
  // An optional boolean: absent or null is `fallback`.
  bool flag(std::string_view key, bool fallback) const {
    const auto found = member(key);
    return !found || found->null() ? fallback : found->boolean();
  }
  // An optional string: absent or null is empty.
  std::string text(std::string_view key) const {
    const auto found = member(key);
    return !found || found->null() ? std::string() : found->string();
  }
  std::string type() const {
    const auto found = member("type");
    if (!found) throw Error("tokenizer.json's " + path_ + " has no type");
    return found->string();
  }

 private:
  const json::Value& value_;
  std::string path_;
  const char* file_;
};

void read_normalizer(const At& at, std::vector<NormalizerStep>& steps) {
  const std::string type = at.type();
  if (type == "Sequence") {
    const At list = at.need("normalizers");
    for (std::size_t i = 0; i < list.array().size(); ++i) read_normalizer(list.item(i), steps);
  } else if (type == "NFC") {
    steps.push_back({NormalizerStep::kNfc, {}, {}});
  } else if (type == "Prepend") {
    steps.push_back(
        {NormalizerStep::kPrepend, decode_utf8_replacing(at.need("prepend").string()), {}});
  } else if (type == "Replace") {
    const At pattern = at.need("pattern");
    const auto string = pattern.member("String");
    if (!string) {
      const auto regex = pattern.member("Regex");
      pattern.unsupported(regex && regex->value().string() ? "Regex " + quoted(regex->string())
                                                           : std::string("kind"),
                          "a Replace normalizer replaces a String");
    }
    if (string->string().empty())
      pattern.unsupported("String ''", "a Replace normalizer replaces a non-empty String");
    steps.push_back({NormalizerStep::kReplace, decode_utf8_replacing(string->string()),
                     decode_utf8_replacing(at.need("content").string())});
  } else {
    at.unsupported("type " + quoted(type), kNormalizers);
  }
}

void read_pre_tokenizer(const At& at, std::vector<PreTokenizerStep>& steps) {
  const std::string type = at.type();
  PreTokenizerStep step;
  if (type == "Sequence") {
    const At list = at.need("pretokenizers");
    for (std::size_t i = 0; i < list.array().size(); ++i) read_pre_tokenizer(list.item(i), steps);
    return;
  }
  if (type == "ByteLevel") {
    step.kind = PreTokenizerStep::kByteLevel;
    step.add_prefix_space = at.flag("add_prefix_space", false);
    step.use_regex = at.flag("use_regex", true);
  } else if (type == "Split") {
    step.kind = PreTokenizerStep::kSplit;
    const At pattern = at.need("pattern");
    const std::string behavior = at.text("behavior");
    const bool invert = at.flag("invert", false);
    const auto refuse_behavior = [&](const char* supported) {
      at.need("behavior")
          .unsupported(quoted(behavior) + " with invert " + (invert ? "true" : "false"), supported);
    };
    if (const auto regex = pattern.member("Regex")) {
      const std::string& source = regex->string();
      for (const KnownPattern& known : kPatterns) {
        if (source == known.pattern) step.regex = std::make_shared<const Regex>(source);
      }
      if (!step.regex) {
        regex->unsupported(quoted(source),
                           "supported: Llama 3's pattern " + quoted(kPatterns[0].pattern) +
                               " and Qwen2's (the same with \\p{N} for \\p{N}{1,3})");
      }
      // Removed with invert keeps the matches (OLMo 2's file): Llama 3's and Qwen2's patterns
      // match every character, so it splits as Isolated does.
      if (behavior == "Isolated" && !invert) {
        step.behavior = PreTokenizerStep::kIsolated;
      } else if (behavior == "Removed" && invert) {
        step.behavior = PreTokenizerStep::kMatchesOnly;
      } else {
        refuse_behavior(
            "supported for a Regex: 'Isolated' with invert false, 'Removed' with invert true");
      }
    } else if (const auto string = pattern.member("String")) {
      step.literal = decode_utf8_replacing(string->string());
      if (step.literal.empty())
        string->unsupported("''", "a Split pre-tokenizer's String is not empty");
      if (behavior == "Isolated" && !invert) {
        step.behavior = PreTokenizerStep::kIsolated;
      } else if (behavior == "MergedWithPrevious" && !invert) {
        step.behavior = PreTokenizerStep::kMergedWithPrevious;
      } else {
        refuse_behavior(
            "supported for a String: 'Isolated' or 'MergedWithPrevious', with invert false");
      }
    } else {
      pattern.wrong("{ Regex } or { String }");
    }
  } else if (type == "Digits") {
    step.kind = PreTokenizerStep::kDigits;
    step.individual_digits = at.flag("individual_digits", false);
  } else if (type == "Metaspace") {
    step.kind = PreTokenizerStep::kMetaspace;
    if (const auto replacement = at.member("replacement"); replacement && !replacement->null()) {
      const std::u32string text = decode_utf8_replacing(replacement->string());
      if (text.size() != 1) replacement->wrong("one character");
      step.replacement = text[0];
    }
    if (const auto scheme = at.member("prepend_scheme"); scheme && !scheme->null()) {
      const std::string& name = scheme->string();
      if (name == "first") {
        step.prepend = PreTokenizerStep::kFirst;
      } else if (name == "always") {
        step.prepend = PreTokenizerStep::kAlways;
      } else if (name == "never") {
        step.prepend = PreTokenizerStep::kNever;
      } else {
        scheme->unsupported(quoted(name), "supported: 'first', 'always', 'never'");
      }
    } else {  // older files: add_prefix_space
      step.prepend =
          at.flag("add_prefix_space", true) ? PreTokenizerStep::kAlways : PreTokenizerStep::kNever;
    }
    step.split = at.flag("split", true);
  } else {
    at.unsupported("type " + quoted(type), kPreTokenizers);
  }
  steps.push_back(std::move(step));
}

// The special tokens a post-processor puts around the text (by content).
void read_post_processor(const At& at, std::vector<std::string>& prefix,
                         std::vector<std::string>& suffix) {
  const std::string type = at.type();
  if (type == "ByteLevel") return;  // offsets only
  if (type == "Sequence") {
    const At list = at.need("processors");
    for (std::size_t i = 0; i < list.array().size(); ++i)
      read_post_processor(list.item(i), prefix, suffix);
    return;
  }
  if (type != "TemplateProcessing") at.unsupported("type " + quoted(type), kPostProcessors);
  const At single = at.need("single");
  std::vector<std::string> before, after;
  bool sequence = false;
  for (std::size_t i = 0; i < single.array().size(); ++i) {
    const At item = single.item(i);
    if (const auto special = item.member("SpecialToken")) {
      (sequence ? after : before).push_back(special->need("id").string());
    } else if (const auto seq = item.member("Sequence")) {
      const std::string id = seq->need("id").string();
      if (id != "A" || sequence)
        seq->need("id").unsupported(quoted(id), "a single text's template holds sequence 'A' once");
      sequence = true;
    } else {
      item.wrong("{ SpecialToken } or { Sequence }");
    }
  }
  if (!sequence)
    single.unsupported("without sequence 'A'", "a template holds the text as sequence 'A'");
  // a later processor wraps what the earlier ones made
  prefix.insert(prefix.begin(), before.begin(), before.end());
  suffix.insert(suffix.end(), after.begin(), after.end());
}

void read_model(const At& model, BpeSpec& spec) {
  model.object();
  if (const auto type = model.member("type")) {
    if (type->string() != "BPE") type->unsupported(quoted(type->string()), kModels);
  } else if (!model.member("merges")) {
    throw Error(std::string("tokenizer.json's model has no type and no merges: it is not BPE; ") +
                kModels);
  }
  if (const auto dropout = model.member("dropout"); dropout && !dropout->null()) {
    const json::Number* number = dropout->value().number();
    if (!number) dropout->wrong("null or a number");
    if (number->value() != 0.0) {
      dropout->unsupported(
          number->text,
          "BPE dropout makes tokenizing random (it is for training); supported: null");
    }
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const std::string value = model.text(key);
    if (!value.empty()) model.need(key).unsupported(quoted(value), "supported: null or ''");
  }
  if (const auto unk = model.member("unk_token"); unk && !unk->null())
    spec.unk_token = unk->string();
  spec.fuse_unk = model.flag("fuse_unk", false);
  spec.byte_fallback = model.flag("byte_fallback", false);
  spec.ignore_merges = model.flag("ignore_merges", false);

  const At vocab = model.need("vocab");
  spec.vocab.reserve(vocab.object().size());
  for (const json::Member& member : vocab.object()) {
    spec.vocab.emplace_back(member.key,
                            At(member.value, "model.vocab[" + quoted(member.key) + "]").id());
  }
  const At merges = model.need("merges");
  spec.merges.reserve(merges.array().size());
  for (std::size_t i = 0; i < merges.array().size(); ++i) {
    const At merge = merges.item(i);
    if (const std::string* line = merge.value().string()) {
      const std::size_t space = line->find(' ');
      if (space == std::string::npos || space == 0 || space + 1 == line->size() ||
          line->find(' ', space + 1) != std::string::npos) {
        throw Error("tokenizer.json's " + merge.path() + " " + quoted(*line) +
                    " is not two tokens separated by a space");
      }
      spec.merges.emplace_back(line->substr(0, space), line->substr(space + 1));
    } else if (merge.value().array() && merge.array().size() == 2) {
      spec.merges.emplace_back(merge.item(0).string(), merge.item(1).string());
    } else {
      merge.wrong("'a b' or ['a', 'b']");
    }
  }
}

// A tokenizer file's text as JSON (`file`: "tokenizer.json", "vocab.json"): invalid UTF-8 refused
// at its first bad byte, invalid JSON with the parser's message, both naming the file.
json::Value parse_tokenizer_file(std::string_view text, const std::string& file) {
  if (const std::size_t bad = first_invalid_utf8(text); bad != std::string_view::npos) {
    throw Error(file + " is not valid UTF-8 (at byte " + std::to_string(bad) + ")");
  }
  const std::string invalid = file + " is not valid JSON";
  return json::parse(text, {invalid, file});
}

}  // namespace

BpeSpec tokenizer_json_spec(std::string_view text) {
  const json::Value document = parse_tokenizer_file(text, "tokenizer.json");
  if (!document.object()) {
    throw Error(std::string("tokenizer.json must be a JSON object, got ") +
                json::kind_name(document));
  }
  const At root(document, "");
  const auto at = [&](std::string_view key) { return root.member(key); };
  BpeSpec spec;
  const auto model = at("model");
  if (!model) throw Error("tokenizer.json has no model");
  read_model(At(model->value(), "model"), spec);

  if (const auto added = at("added_tokens"); added && !added->null()) {
    const At list(added->value(), "added_tokens");
    for (std::size_t i = 0; i < list.array().size(); ++i) {
      const At item = list.item(i);
      AddedToken token;
      token.id = item.need("id").id();
      token.content = item.need("content").string();
      if (token.content.empty())
        throw Error("tokenizer.json's " + item.path() + ".content is empty");
      token.special = item.flag("special", false);
      token.lstrip = item.flag("lstrip", false);
      token.rstrip = item.flag("rstrip", false);
      token.single_word = item.flag("single_word", false);
      token.normalized = item.flag("normalized", !token.special);
      spec.added.push_back(std::move(token));
    }
  }
  if (const auto normalizer = at("normalizer"); normalizer && !normalizer->null()) {
    read_normalizer(At(normalizer->value(), "normalizer"), spec.normalizer);
  }
  if (const auto pre = at("pre_tokenizer"); !pre) {
    spec.pre_tokenizer.push_back(PreTokenizerStep{});  // GPT-2's ByteLevel (see the header)
  } else if (!pre->null()) {
    read_pre_tokenizer(At(pre->value(), "pre_tokenizer"), spec.pre_tokenizer);
  }
  if (const auto post = at("post_processor"); post && !post->null()) {
    read_post_processor(At(post->value(), "post_processor"), spec.prefix, spec.suffix);
  }
  return spec;
}

BpeSpec vocab_json_spec(std::string_view vocab_json, std::string_view merges) {
  const json::Value document = parse_tokenizer_file(vocab_json, "vocab.json");
  if (!document.object()) {
    throw Error(std::string("the tokenizer's vocab must be an object { token: id }, got ") +
                json::kind_name(document));
  }
  std::vector<std::pair<std::string, std::int32_t>> vocab;
  vocab.reserve(document.object()->size());
  for (const json::Member& member : *document.object()) {
    vocab.emplace_back(member.key,
                       At(member.value, "[" + quoted(member.key) + "]", "vocab.json").id());
  }
  return gpt2_files_spec(std::move(vocab), merges);
}

BpeTokenizer read_tokenizer_json(std::string_view text, UnicodeNormalize nfc) {
  return BpeTokenizer(tokenizer_json_spec(text), std::move(nfc));
}

}  // namespace attn
