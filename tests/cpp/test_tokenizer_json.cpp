// tokenizer.json's pieces by hand: the pre-tokenizer regex matcher (Llama 3's and Qwen2's
// patterns, expectations checked against @huggingface/tokenizers 0.2.0), Digits, Metaspace,
// ByteLevel, the normalizers, added tokens, BPE options (ignore_merges, byte fallback, fuse_unk),
// the post-processor's BOS, token texts, and the messages of everything refused. (Ids against the
// reference on thousands of strings per kind: tests/js/tokenizer-json.test.mjs.)
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attention/error.hpp"
#include "attention/text/normalizer.hpp"
#include "attention/text/pre_tokenizer.hpp"
#include "attention/text/regex.hpp"
#include "attention/text/tokenizer_json.hpp"
#include "attention/utf8.hpp"

using Catch::Matchers::ContainsSubstring;
using Strings = std::vector<std::string>;
using Ids = std::vector<std::int32_t>;

namespace {

const std::string kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

std::string utf8(std::u32string_view text) {
  std::string out;
  for (const char32_t cp : text) attn::append_utf8(out, cp);
  return out;
}

Strings utf8(const std::vector<std::u32string>& pieces) {
  Strings out;
  for (const auto& piece : pieces) out.push_back(utf8(piece));
  return out;
}

Strings split(const std::string& pattern, std::string_view text) {
  return utf8(attn::Regex(pattern).split_isolated(attn::decode_utf8_replacing(text)));
}

Strings pre_tokenize(const attn::PreTokenizerStep& step, std::string_view text,
                     std::size_t section = 0) {
  return utf8(attn::PreTokenizer({step})(attn::decode_utf8_replacing(text), section));
}

// A JSON string literal of UTF-8 text.
std::string quote(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[(c >> 4) & 15];
      out += kHex[c & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A byte-level vocabulary: the 256 byte characters (id = byte), then `extra` from id 256.
std::string byte_level_vocab(const Strings& extra) {
  std::string vocab = "{";
  for (int b = 0; b < 256; ++b) {
    std::string character;
    attn::append_utf8(character, attn::byte_to_unicode(std::uint8_t(b)));
    vocab += quote(character) + ":" + std::to_string(b) + ",";
  }
  for (std::size_t i = 0; i < extra.size(); ++i)
    vocab += quote(extra[i]) + ":" + std::to_string(256 + i) + ",";
  vocab.back() = '}';
  return vocab;
}

// A SentencePiece vocabulary: <unk> <s> </s>, <0x00>…<0xFF> (ids 3–258), then `extra` from 259.
std::string sentencepiece_vocab(const Strings& extra) {
  std::string vocab = R"({"<unk>":0,"<s>":1,"</s>":2,)";
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    vocab +=
        std::string("\"<0x") + kHex[b >> 4] + kHex[b & 15] + ">\":" + std::to_string(3 + b) + ",";
  }
  for (std::size_t i = 0; i < extra.size(); ++i)
    vocab += quote(extra[i]) + ":" + std::to_string(259 + i) + ",";
  vocab.back() = '}';
  return vocab;
}

const std::string kLlama2Normalizer =
    R"({"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]})";
const std::string kBos =
    R"({"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],"pair":[],"special_tokens":{}})";
const std::string kSpecials =
    R"([{"id":0,"content":"<unk>","special":true,"normalized":false},{"id":1,"content":"<s>","special":true,"normalized":false},{"id":2,"content":"</s>","special":true,"normalized":false}])";

// Llama 2's layout over sentencepiece_vocab({"▁", "a", "b", "▁a", "▁ab", "lens"}): ids 259–264.
std::string llama2_json(bool byte_fallback, bool fuse_unk, const std::string& added = kSpecials) {
  return R"({"version":"1.0","truncation":null,"padding":null,"added_tokens":)" + added +
         R"(,"normalizer":)" + kLlama2Normalizer + R"(,"pre_tokenizer":null,"post_processor":)" +
         kBos +
         R"(,"decoder":null,"model":{"type":"BPE","dropout":null,"unk_token":"<unk>","continuing_subword_prefix":null,"end_of_word_suffix":null,"fuse_unk":)" +
         (fuse_unk ? "true" : "false") + R"(,"byte_fallback":)" +
         (byte_fallback ? "true" : "false") + R"(,"vocab":)" +
         sentencepiece_vocab({"▁", "a", "b", "▁a", "▁ab", "lens"}) +
         R"(,"merges":["▁ a","▁a b"]}})";
}

// A byte-level tokenizer.json: the 256 bytes, "he" 256, "ll" 257, "hell" 258, "hello" 259,
// "Ġhe" 260, "Ġworld" 261 (no merge makes it); pre_tokenizer and the rest as given.
std::string byte_level_json(const std::string& pre_tokenizer, bool ignore_merges,
                            const std::string& added = "[]", const std::string& post = "null",
                            const std::string& normalizer = "null") {
  return R"({"added_tokens":)" + added + R"(,"normalizer":)" + normalizer + R"(,"pre_tokenizer":)" +
         pre_tokenizer + R"(,"post_processor":)" + post +
         R"(,"decoder":{"type":"ByteLevel"},"model":{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":"","end_of_word_suffix":"","fuse_unk":false,"byte_fallback":false,"ignore_merges":)" +
         (ignore_merges ? "true" : "false") + R"(,"vocab":)" +
         byte_level_vocab({"he", "ll", "hell", "hello", "Ġhe", "Ġworld"}) +
         R"(,"merges":[["h","e"],["l","l"],["he","ll"],["hell","o"],["Ġ","he"]]}})";
}

std::string split_pre_tokenizer(const std::string& pattern) {
  return R"({"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":)" +
         quote(pattern) +
         R"(},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":false}]})";
}

attn::BpeTokenizer read(const std::string& json) {
  return attn::read_tokenizer_json(json, {});
}

}  // namespace

TEST_CASE("the regex matcher splits as Llama 3's and Qwen2's patterns do", "[tokenizer_json]") {
  CHECK(split(kLlama3, "Hello world's  \n\n  123") ==
        Strings{"Hello", " world", "'s", "  \n\n", " ", " ", "123"});
  CHECK(split(kQwen2, "Hello world's  \n\n  123") ==
        Strings{"Hello", " world", "'s", "  \n\n", " ", " ", "1", "2", "3"});
  CHECK(split(kLlama3, "I'M you're they'LL 12345") ==
        Strings{"I", "'M", " you", "'re", " they", "'LL", " ", "123", "45"});
  CHECK(split(kLlama3, "x!!?\r\ny") == Strings{"x", "!!?\r\n", "y"});
  // (?i:...) folds ASCII only, as the reference: the long s is a letter after an apostrophe
  CHECK(split(kLlama3, "'\u017F 'S 'Sam") == Strings{"'\u017F", " '", "S", " '", "Sam"});
  CHECK(split(kLlama3, "  \t\n \n  x  ") == Strings{"  \t\n \n", " ", " x", "  "});
  CHECK(split(kLlama3, "a   b") == Strings{"a", "  ", " b"});
  CHECK(split(kLlama3,
              "\xC3\xA9"
              "a\xCC\x81 \xE4\xB8\xAD\xE6\x96\x87!") == Strings{"\xC3\xA9"
                                                                "a",
                                                                "\xCC\x81",
                                                                " \xE4\xB8\xAD\xE6\x96\x87", "!"});
  CHECK(split(kLlama3, "").empty());
  // \s is Oniguruma's (White_Space): U+0085 is a space, U+FEFF is not
  CHECK(split(kLlama3, "\xC2\x85  y") == Strings{"\xC2\x85 ", " y"});
  CHECK(split(kLlama3, "a\xEF\xBB\xBF\xEF\xBB\xBF b") ==
        Strings{"a", "\xEF\xBB\xBF\xEF\xBB\xBF", " b"});
  CHECK(attn::is_white_space(0x85));
  CHECK_FALSE(attn::is_white_space(0xFEFF));
  // "Isolated": the stretches between matches are pieces too
  CHECK(split(R"(\p{L}+)", "ab 12 cd") == Strings{"ab", " 12 ", "cd"});
  CHECK(split(R"(a|(?=b))", "xbab") == Strings{"x", "b", "a", "b"});
}

TEST_CASE("the regex matcher backtracks, and refuses what it does not support",
          "[tokenizer_json]") {
  const attn::Regex optional_then_run(R"([^x]?y+z)");
  CHECK(optional_then_run.match_at(U"yyz", 0) == 3);  // the optional part gives back its y
  CHECK(optional_then_run.match_at(U"ayz", 0) == 3);
  CHECK(optional_then_run.match_at(U"yya", 0) == attn::Regex::npos);
  CHECK(attn::Regex(R"(\s+(?!\S))").match_at(U"   a", 0) == 2);
  CHECK(attn::Regex(R"(\p{N}{1,3})").match_at(U"12345", 0) == 3);
  CHECK(attn::Regex(R"([a-c]{2,})").match_at(U"abcabd", 0) == 5);
  CHECK(attn::Regex(R"((?i:ab)c)").match_at(U"ABc", 0) == 3);
  CHECK(attn::Regex(R"((?i:ab)c)").match_at(U"ABC", 0) == attn::Regex::npos);
  CHECK(attn::Regex(R"([^\P{L}])").match_at(U"\u00E9", 0) == 1);
  CHECK(attn::Regex(R"(\.\|)").match_at(U".|", 0) == 2);
  const auto refused = [](const std::string& pattern, const std::string& what) {
    CHECK_THROWS_WITH(attn::Regex(pattern),
                      ContainsSubstring(what) && ContainsSubstring("does not support"));
  };
  refused(R"((?<=a)b)", "the group '(?<'");
  refused(R"(\d+)", "the escape '\\d'");
  refused(R"(\p{Lu})", "the property '\\p{Lu}'");
  refused(R"(a*?)", "a lazy, possessive or repeated quantifier");
  refused(R"((ab)+)", "a quantifier on a group");
  refused(R"([[:alpha:]])", "a nested class");
  refused(R"(a.b)", "'.'");
  refused(R"(^a)", "the anchor '^'");
  refused(R"((a)", "an unclosed group");
  refused(R"(a))", "an unmatched ')'");
  refused(R"([a-)", "an unclosed class");
  refused(R"(a{2,1})", "a malformed {n,m} quantifier");
}

TEST_CASE("Digits, Metaspace and ByteLevel split as the reference does", "[tokenizer_json]") {
  attn::PreTokenizerStep digits;
  digits.kind = attn::PreTokenizerStep::kDigits;
  digits.individual_digits = true;
  // JavaScript's \d: ASCII digits only (Arabic-Indic digits stay with the text)
  CHECK(pre_tokenize(digits, "ab123c4 \xD9\xA1\xD9\xA2") ==
        Strings{"ab", "1", "2", "3", "c", "4", " \xD9\xA1\xD9\xA2"});
  digits.individual_digits = false;
  CHECK(pre_tokenize(digits, "ab123c4") == Strings{"ab", "123", "c", "4"});

  attn::PreTokenizerStep meta;
  meta.kind = attn::PreTokenizerStep::kMetaspace;
  meta.prepend = attn::PreTokenizerStep::kFirst;
  CHECK(pre_tokenize(meta, "hello world", 0) == Strings{"▁hello", "▁world"});
  CHECK(pre_tokenize(meta, "hello world", 1) == Strings{"hello", "▁world"});
  CHECK(pre_tokenize(meta, "  a", 0) == Strings{"▁", "▁a"});
  meta.prepend = attn::PreTokenizerStep::kAlways;
  CHECK(pre_tokenize(meta, "hello world", 1) == Strings{"▁hello", "▁world"});
  meta.prepend = attn::PreTokenizerStep::kNever;
  meta.split = false;
  CHECK(pre_tokenize(meta, "hello world", 0) == Strings{"hello▁world"});

  attn::PreTokenizerStep bytes;
  bytes.add_prefix_space = true;
  bytes.use_regex = false;
  CHECK(pre_tokenize(bytes, "hi there") == Strings{"ĠhiĠthere"});
  bytes.use_regex = true;
  CHECK(pre_tokenize(bytes, "hi there\n") == Strings{"Ġhi", "Ġthere", "Ċ"});
}

TEST_CASE("normalizers: Prepend and Replace, NFC through the caller's normalization",
          "[tokenizer_json]") {
  const attn::Normalizer llama2(
      {{attn::NormalizerStep::kPrepend, U"▁", {}}, {attn::NormalizerStep::kReplace, U" ", U"▁"}},
      {});
  CHECK(utf8(llama2(U"a  b ")) == "▁a▁▁b▁");
  CHECK(llama2(U"").empty());
  CHECK_THROWS_WITH(attn::Normalizer({{attn::NormalizerStep::kNfc, {}, {}}}, {}),
                    ContainsSubstring("normalizer NFC needs Unicode normalization"));
  int calls = 0;
  const attn::Normalizer nfc({{attn::NormalizerStep::kNfc, {}, {}}}, [&](const std::string& text) {
    ++calls;
    return text == "e\xCC\x81" ? std::string("\xC3\xA9") : text;
  });
  CHECK(utf8(nfc(U"e\u0301")) == "\xC3\xA9");
  CHECK(calls == 1);
}

TEST_CASE("a byte-level tokenizer.json: merges by rank, ignore_merges, added tokens",
          "[tokenizer_json]") {
  const auto llama3 = read(byte_level_json(split_pre_tokenizer(kLlama3), true));
  CHECK(llama3.vocab_size() == 262);
  CHECK(llama3.encode("hello world") == Ids{259, 261});  // " world" is in the vocabulary
  const auto merged = read(byte_level_json(split_pre_tokenizer(kLlama3), false));
  CHECK(merged.encode("hello world") == Ids{259, ' ', 'w', 'o', 'r', 'l', 'd'});
  CHECK(merged.encode("hellx he") == Ids{258, 'x', 260});
  CHECK(merged.token_text(260) == " he");
  CHECK(merged.token_text(0xC3) == "<0xC3>");
  CHECK(merged.special_prefix().empty());

  // added tokens: the longest first, lstrip / rstrip, each its own id; a BOS from the template
  const std::string added =
      R"([{"id":262,"content":"<|im","special":true,"normalized":false},)"
      R"({"id":263,"content":"<|im_start|>","special":true,"normalized":false},)"
      R"({"id":264,"content":"<mask>","special":true,"lstrip":true,"rstrip":true,"normalized":false},)"
      R"({"id":265,"content":"<|begin_of_text|>","special":true,"normalized":false}])";
  const std::string post =
      R"({"type":"Sequence","processors":[{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":false,"use_regex":true},)"
      R"({"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<|begin_of_text|>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}]}]})";
  const auto tokenizer = read(byte_level_json(split_pre_tokenizer(kLlama3), true, added, post));
  CHECK(tokenizer.special_prefix() == Ids{265});
  CHECK(tokenizer.encode("<|im_start|>he<|imhe") == Ids{265, 263, 256, 262, 256});
  CHECK(tokenizer.encode("he  <mask>  he") == Ids{265, 256, 264, 256});
  CHECK(tokenizer.encode("he  <mask>  he", false) == Ids{256, 264, 256});
  CHECK(tokenizer.encode("") == Ids{265});
  CHECK(tokenizer.token_text(263) == "<|im_start|>");
}

TEST_CASE("SentencePiece-style: Prepend/Replace or Metaspace, byte fallback, unk, fuse_unk",
          "[tokenizer_json]") {
  // ids: ▁ 259, a 260, b 261, ▁a 262, ▁ab 263, lens 264
  const auto llama2 = read(llama2_json(true, true));
  CHECK(llama2.special_prefix() == Ids{1});
  CHECK(llama2.encode("ab a\n") == Ids{1, 263, 262, 3 + 0x0A});
  CHECK(llama2.encode("<s>ab</s>") == Ids{1, 1, 263, 2});
  CHECK(llama2.encode("\xE4\xB8\xAD", false) == Ids{259, 3 + 0xE4, 3 + 0xB8, 3 + 0xAD});
  CHECK(llama2.token_text(263) == " ab");
  CHECK(llama2.token_text(3 + 0x0A) == "\n");
  CHECK(llama2.token_text(3 + 0xE4) == "<0xE4>");
  CHECK(llama2.token_text(1) == "<s>");
  CHECK(llama2.token_bytes(259) == " ");

  const auto unk = read(llama2_json(false, false));
  const auto fused = read(llama2_json(false, true));
  const std::string emoji = "\xF0\x9F\x98\x80";
  CHECK(unk.encode("a" + emoji + emoji + "b", false) == Ids{262, 0, 0, 261});
  CHECK(fused.encode("a" + emoji + emoji + "b", false) == Ids{262, 0, 261});
  CHECK(fused.encode(emoji + " " + emoji, false) == Ids{259, 0, 259, 0});

  // a normalized added token is found in the normalized text ("▁lens"), a raw one before it
  const std::string added = kSpecials.substr(0, kSpecials.size() - 1) +
                            R"(,{"id":264,"content":"lens","special":false,"normalized":true}])";
  const auto with_lens = read(llama2_json(true, true, added));
  CHECK(with_lens.encode("a lens", false) == Ids{262, 264});
  CHECK(with_lens.encode("alens", false) == Ids{262, 3 + 'l', 3 + 'e', 3 + 'n', 3 + 's'});

  // Metaspace (prepend "first": only the first stretch before an added token gets ▁)
  std::string metaspace = llama2_json(true, true);
  const std::string pre = R"("pre_tokenizer":null)";
  metaspace.replace(
      metaspace.find(pre), pre.size(),
      R"("pre_tokenizer":{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":false})");
  const std::string normalizer = R"("normalizer":)" + kLlama2Normalizer;
  metaspace.replace(metaspace.find(normalizer), normalizer.size(), R"("normalizer":null)");
  const auto mistral = read(metaspace);
  CHECK(mistral.encode("ab a") == Ids{1, 263, 262});
  CHECK(mistral.encode("a</s>a") == Ids{1, 262, 2, 260});
  CHECK(mistral.token_text(262) == " a");
}

TEST_CASE("a tokenizer.json without pre_tokenizer is GPT-2's byte-level BPE", "[tokenizer_json]") {
  const auto gpt2 = read(
      R"({"model":{"type":"BPE","vocab":)" +
      byte_level_vocab({"he", "ll", "hell", "hello", "Ġhe"}) +
      R"(,"merges":["h e","l l","he ll","hell o","Ġ he"]},"added_tokens":[{"id":261,"content":"<|endoftext|>"}]})");
  CHECK(gpt2.encode("hello he<|endoftext|>") == Ids{259, 260, 261});
  CHECK(gpt2.token_text(261) == "<|endoftext|>");
}

TEST_CASE("tokenizer.json: what is not supported is refused by name", "[tokenizer_json]") {
  const std::string split = split_pre_tokenizer(kLlama3);
  const auto refused = [](const std::string& json, const std::string& what) {
    CHECK_THROWS_WITH(read(json), ContainsSubstring(what));
  };
  const auto with_model = [&](const std::string& model) {
    return R"({"added_tokens":[],"normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null,"model":)" +
           model + "}";
  };
  refused(with_model(R"({"type":"WordPiece","vocab":{"a":0},"unk_token":"[UNK]"})"),
          "tokenizer.json's model.type 'WordPiece' is not supported; supported: BPE");
  refused(with_model(R"({"type":"Unigram","vocab":[["a",0.0]]})"),
          "model.type 'Unigram' is not supported");
  refused(with_model(R"({"vocab":{"a":0}})"), "model has no type and no merges: it is not BPE");
  refused(
      byte_level_json(split, false, "[]", "null", R"({"type":"NFKC"})"),
      "tokenizer.json's normalizer type 'NFKC' is not supported; supported: NFC, Prepend, Replace");
  refused(byte_level_json(split, false, "[]", "null",
                          R"({"type":"Sequence","normalizers":[{"type":"Lowercase"}]})"),
          "normalizer.normalizers[0] type 'Lowercase' is not supported");
  refused(byte_level_json(R"({"type":"Whitespace"})", false),
          "tokenizer.json's pre_tokenizer type 'Whitespace' is not supported; supported: "
          "ByteLevel, Split");
  refused(byte_level_json(split_pre_tokenizer(R"(\w+|\s+)"), false),
          "pre_tokenizer.pretokenizers[0].pattern.Regex '\\w+|\\s+' is not supported; supported: "
          "Llama 3's pattern");
  std::string removed = split;
  removed.replace(removed.find("Isolated"), 8, "Removed");
  refused(byte_level_json(removed, false),
          "pre_tokenizer.pretokenizers[0].behavior 'Removed' with invert false is not supported; "
          "supported for a Regex: 'Isolated' with invert false, 'Removed' with invert true");
  refused(byte_level_json(
              R"({"type":"Split","pattern":{"String":""},"behavior":"Isolated","invert":false})",
              false),
          "pre_tokenizer.pattern.String '' is not supported");
  refused(byte_level_json(
              R"({"type":"Split","pattern":{"String":" "},"behavior":"Contiguous","invert":false})",
              false),
          "pre_tokenizer.behavior 'Contiguous' with invert false is not supported; supported for a "
          "String: 'Isolated' or 'MergedWithPrevious', with invert false");
  refused(
      byte_level_json(R"({"type":"Split","pattern":{"Glob":"*"},"behavior":"Isolated"})", false),
      "pre_tokenizer.pattern must be { Regex } or { String }, got an object");
  refused(byte_level_json(split, false, "[]",
                          R"({"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0]})"),
          "tokenizer.json's post_processor type 'RobertaProcessing' is not supported; supported: "
          "TemplateProcessing");
  refused(
      byte_level_json(
          split, false, "[]",
          R"({"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}]})"),
      "tokenizer.json's post_processor adds '<s>', which is not a token of the vocabulary");
  std::string prefix = byte_level_json(split, false);
  prefix.replace(prefix.find(R"("continuing_subword_prefix":"")"), 30,
                 R"("continuing_subword_prefix":"##")");
  refused(prefix, "model.continuing_subword_prefix '##' is not supported; supported: null or ''");
  std::string dropout = byte_level_json(split, false);
  dropout.replace(dropout.find(R"("dropout":null)"), 14, R"("dropout":0.1)");
  refused(dropout, "model.dropout 0.1 is not supported");
  refused(llama2_json(true, true)
              .replace(llama2_json(true, true).find(R"("unk_token":"<unk>")"), 19,
                       R"("unk_token":"<u>")"),
          "tokenizer.json's unk_token '<u>' is not a token of the vocabulary");
}

TEST_CASE("tokenizer.json: bad JSON, wrong types and inconsistent ids are named",
          "[tokenizer_json]") {
  const auto refused = [](const std::string& json, const std::string& what) {
    CHECK_THROWS_WITH(read(json), ContainsSubstring(what));
  };
  refused("{\"model\": ", "tokenizer.json is not valid JSON at byte 10");
  refused("{\"model\": \"\xFF\"}", "tokenizer.json is not valid UTF-8 (at byte 11)");
  refused("[]", "tokenizer.json must be a JSON object, got an array");
  refused("{}", "tokenizer.json has no model");
  refused(R"({"model":{"type":"BPE","vocab":[],"merges":[]}})",
          "tokenizer.json's model.vocab must be an object, got an array");
  refused(R"({"model":{"type":"BPE","vocab":{"a":-1},"merges":[]}})",
          "tokenizer.json's model.vocab['a'] must be a token id (an integer from 0 to 1048575), "
          "got a number");
  refused(R"({"model":{"type":"BPE","vocab":{"a":0},"merges":{}}})",
          "model.merges must be an array, got an object");
  refused(R"({"model":{"type":"BPE","vocab":{"a":0},"merges":[1]}})",
          "model.merges[0] must be 'a b' or ['a', 'b'], got a number");
  refused(R"({"model":{"type":"BPE","vocab":{"a":0},"merges":["a"]}})",
          "model.merges[0] 'a' is not two tokens separated by a space");
  refused(R"({"model":{"type":"BPE","vocab":{"a":0},"merges":["a b"]}})",
          "tokenizer.json's merges[0] 'a b' joins tokens that are not in the vocabulary");
  refused(R"({"model":{"type":"BPE","vocab":{"a":0,"b":2},"merges":[]}})",
          "the tokenizer's vocab has no token with id 1");
  refused(R"({"model":{"type":"BPE","vocab":{"a":0,"b":0},"merges":[]}})",
          "vocab gives id 0 to both 'a' and 'b'");
  refused(R"({"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"added_tokens":[{"id":1}]})",
          "added_tokens[0] has no content");
  refused(
      R"({"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"added_tokens":[{"id":1,"content":"x","special":"yes"}]})",
      "added_tokens[0].special must be true or false, got a string");
  refused(
      R"({"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"pre_tokenizer":{"type":"Metaspace","replacement":"ab"}})",
      "pre_tokenizer.replacement must be one character");
  refused(
      R"({"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"normalizer":{"type":"NFC"},"pre_tokenizer":null})",
      "normalizer NFC needs Unicode normalization");
  CHECK_NOTHROW(attn::read_tokenizer_json(
      R"({"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"normalizer":{"type":"NFC"},"pre_tokenizer":null})",
      [](const std::string& text) { return text; }));
}

TEST_CASE("Split: a literal String (Isolated, MergedWithPrevious), a Regex's matches only",
          "[tokenizer_json]") {
  attn::PreTokenizerStep literal;
  literal.kind = attn::PreTokenizerStep::kSplit;
  literal.literal = U" ";
  literal.behavior = attn::PreTokenizerStep::kMergedWithPrevious;  // Gemma's, as Rust splits
  CHECK(pre_tokenize(literal, "a b  c ") == Strings{"a ", "b ", " ", "c "});
  CHECK(pre_tokenize(literal, "abc") == Strings{"abc"});
  literal.behavior = attn::PreTokenizerStep::kIsolated;
  CHECK(pre_tokenize(literal, "a b  c") == Strings{"a", " ", "b", " ", " ", "c"});

  // "Removed" with invert: the matches are the words, what lies between them is dropped
  attn::PreTokenizerStep matches;
  matches.kind = attn::PreTokenizerStep::kSplit;
  matches.behavior = attn::PreTokenizerStep::kMatchesOnly;
  matches.regex = std::make_shared<const attn::Regex>(R"(\p{L}+)");
  CHECK(pre_tokenize(matches, "ab 12 cd!") == Strings{"ab", "cd"});
  // Llama 3's (cl100k's) pattern matches every character: OLMo 2's Removed + invert is Isolated
  matches.regex = std::make_shared<const attn::Regex>(kLlama3);
  for (const std::string text : {"Hello world's  \n\n  123", "x!!?\r\ny", "  \t\n \n  x  "}) {
    CHECK(pre_tokenize(matches, text) == split(kLlama3, text));
  }
}

TEST_CASE("Gemma's layout: Replace ' ' by '▁', Split(' ') merged, byte fallback, '\\t', <bos>",
          "[tokenizer_json]") {
  // As transformers' GemmaConverter writes it: <pad> <eos> <bos> <unk>, the 256 byte tokens with
  // "\t" for <0x09>, then ▁ 260, a 261, b 262, ▁a 263, ▁ab 264; "\n" a user-defined symbol
  // (an added token, normalized false, special false) at 265.
  std::string vocab = R"({"<pad>":0,"<eos>":1,"<bos>":2,"<unk>":3,)";
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    const std::string token =
        b == 9 ? std::string("\\t") : std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
    vocab += "\"" + token + "\":" + std::to_string(4 + b) + ",";
  }
  vocab += R"("▁":260,"a":261,"b":262,"▁a":263,"▁ab":264,"\n":265})";
  const std::string json =
      R"({"added_tokens":[{"id":0,"content":"<pad>","special":true,"normalized":false},)"
      R"({"id":1,"content":"<eos>","special":true,"normalized":false},)"
      R"({"id":2,"content":"<bos>","special":true,"normalized":false},)"
      R"({"id":3,"content":"<unk>","special":true,"normalized":false},)"
      R"({"id":265,"content":"\n","special":false,"normalized":false}],)"
      R"("normalizer":{"type":"Replace","pattern":{"String":" "},"content":"▁"},)"
      R"("pre_tokenizer":{"type":"Split","pattern":{"String":" "},"behavior":"MergedWithPrevious","invert":false},)"
      R"("post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<bos>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}]},)"
      R"("decoder":null,"model":{"type":"BPE","dropout":null,"unk_token":"<unk>","continuing_subword_prefix":null,"end_of_word_suffix":null,"fuse_unk":true,"byte_fallback":true,"ignore_merges":false,"vocab":)" +
      vocab + R"(,"merges":[["▁","a"],["▁a","b"]]}})";
  const auto gemma = read(json);
  CHECK(gemma.special_prefix() == Ids{2});
  CHECK(gemma.encode("ab a\n") == Ids{2, 261, 262, 263, 265});  // no ▁ is prepended
  CHECK(gemma.encode(" ab") == Ids{2, 264});
  CHECK(gemma.encode("a\tb", false) == Ids{261, 4 + 9, 262});  // the tab is a token of its own
  CHECK(gemma.encode("\xE4\xB8\xAD", false) == Ids{4 + 0xE4, 4 + 0xB8, 4 + 0xAD});
  CHECK(gemma.token_text(264) == " ab");
  CHECK(gemma.token_text(4 + 9) == "\t");
  CHECK(gemma.token_text(4 + 0x41) == "A");
}

TEST_CASE("GPT-NeoX's layout: NFC, and runs of spaces as added tokens found after it",
          "[tokenizer_json]") {
  // Pythia's (GPT-NeoX-20B's) added tokens: runs of spaces, normalized, not special; the longest
  // run first at each position, the rest of the text split around them.
  const std::string added =
      R"([{"id":262,"special":false,"content":"   ","single_word":false,"lstrip":false,"rstrip":false,"normalized":true},)"
      R"({"id":263,"special":false,"content":"  ","single_word":false,"lstrip":false,"rstrip":false,"normalized":true}])";
  const auto neox = attn::read_tokenizer_json(
      byte_level_json(R"({"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true})", false,
                      added, R"({"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true})",
                      R"({"type":"NFC"})"),
      [](const std::string& text) { return text; });
  CHECK(neox.encode("he he") == Ids{256, 260});
  CHECK(neox.encode("he   he") == Ids{256, 262, 256});   // the run is a token: "he", not " he"
  CHECK(neox.encode("he    he") == Ids{256, 262, 260});  // three spaces, then " he"
  CHECK(neox.encode("he     he") == Ids{256, 262, 263, 256});  // 3 + 2
  CHECK(neox.special_prefix().empty());
  CHECK(neox.special_suffix().empty());
}

TEST_CASE("a 262 144-token vocabulary, and added tokens past the model's (Gemma 3's)",
          "[tokenizer_json]") {
  // Gemma 3's tokenizer: 262 144 vocabulary tokens and <image_soft_token> at 262 144, while its
  // text model (gemma-3-270m) has 262 144 rows: the tokenizer loads, the token is refused by name.
  const auto gemma3 = [](bool bos_past_the_end) {
    attn::BpeSpec spec;
    spec.vocab = {{"a", 0}, {"b", 1}, {"ab", 2}};
    for (std::int32_t id = 3; id < 262144; ++id)
      spec.vocab.emplace_back("w" + std::to_string(id), id);
    spec.merges = {{"a", "b"}};
    spec.added.push_back({"<image_soft_token>", 262144, true, false, false, false, false});
    if (bos_past_the_end) spec.prefix = {"<image_soft_token>"};
    return attn::BpeTokenizer(std::move(spec), {});
  };
  auto tokenizer = gemma3(false);
  CHECK(tokenizer.vocab_size() == 262145);
  tokenizer.check_fits(262144);
  CHECK(tokenizer.encode("abba") == Ids{2, 1, 0});
  CHECK(tokenizer.token_text(262143) == "w262143");
  CHECK_THROWS_WITH(tokenizer.encode("ab<image_soft_token>"),
                    "the text holds '<image_soft_token>' (token 262144), which the model's "
                    "vocabulary of 262144 tokens does not have");
  CHECK(tokenizer.encode("ba") == Ids{1, 0});  // and it goes on working
  auto small = gemma3(false);
  CHECK_THROWS_WITH(small.check_fits(262143),
                    ContainsSubstring("the tokenizer has 262145 tokens but the model's "
                                      "vocabulary has 262143"));
  auto bos = gemma3(true);
  CHECK_THROWS_WITH(bos.check_fits(262144),
                    ContainsSubstring("post_processor adds '<image_soft_token>' (token 262144)"));
}

TEST_CASE("OLMo 2's Split (Removed, inverted) reads as Isolated; Phi-3's rstrip",
          "[tokenizer_json]") {
  std::string olmo = split_pre_tokenizer(kLlama3);
  const std::string isolated_behavior = R"("behavior":"Isolated","invert":false)";
  olmo.replace(olmo.find(isolated_behavior), isolated_behavior.size(),
               R"("behavior":"Removed","invert":true)");
  const auto removed = read(byte_level_json(olmo, false));
  const auto isolated = read(byte_level_json(split_pre_tokenizer(kLlama3), false));
  for (const std::string text : {"hello world", "hellx  he\n\nhe", "he's 12345 !!"})
    CHECK(removed.encode(text) == isolated.encode(text));

  // rstrip (Phi-3's <|user|>, <|end|>, </s>): the white space after the token goes
  const std::string added =
      kSpecials.substr(0, kSpecials.size() - 1) +
      R"(,{"id":264,"content":"lens","special":true,"rstrip":true,"normalized":false}])";
  const auto phi3 = read(llama2_json(true, true, added));
  CHECK(phi3.encode("lens \n ab", false) == Ids{264, 263});
  CHECK(phi3.encode("a lens", false) == Ids{262, 259, 264});
}

TEST_CASE("TemplateProcessing: several special tokens around the text, and nested Sequences",
          "[tokenizer_json]") {
  // As the reference's Sequence post-processor: each template wraps what the ones before made.
  std::string json = llama2_json(true, true);
  const std::string bos = R"("post_processor":)" + kBos;
  json.replace(
      json.find(bos), bos.size(),
      R"("post_processor":{"type":"Sequence","processors":[)"
      R"({"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"</s>","type_id":0}}]},)"
      R"({"type":"Sequence","processors":[{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<unk>","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"</s>","type_id":0}}]}]}]})");
  const auto tokenizer = read(json);
  CHECK(tokenizer.special_prefix() == Ids{0, 1});
  CHECK(tokenizer.special_suffix() == Ids{2, 2});
  CHECK(tokenizer.encode("ab") == Ids{0, 1, 263, 2, 2});
  CHECK(tokenizer.encode("ab", false) == Ids{263});
}
