// A GGUF file's tokenizer as tokenizer.json's text, see gguf_tokenizer.hpp.
#include "attention/text/gguf_tokenizer.hpp"

#include <cmath>
#include <cstdio>
#include <string_view>
#include <unordered_map>

#include "attention/error.hpp"
#include "attention/text/sentencepiece_merges.hpp"
#include "attention/text/tokenizer_json.hpp"
#include "attention/utf8.hpp"

namespace attn {

namespace {

// llama.cpp's token types (llama_token_type): 0 undefined, 1 normal, 2 unknown, 3 control, 4
// user-defined, 5 unused, 6 byte.
// A token's longest, and the most tokens (tokenizer.json's reader refuses more too), checked
// before a SentencePiece vocabulary's merges are generated.
constexpr std::size_t kMaxGgufTokenBytes = 1024;
constexpr std::size_t kMaxGgufTokens = std::size_t{1} << 20;
constexpr std::int64_t kUnknownToken = 2, kControlToken = 3, kUserDefinedToken = 4,
                       kLargestTokenType = 6;

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  out += '"';
}

std::string quoted(std::string_view text) {
  return "'" + std::string(text.substr(0, 40)) + "'";
}

// The pre-tokenizer (and normalizer, and whether merges are ignored for a word in the vocabulary)
// of a tokenizer.ggml.pre name, as the model's tokenizer.json holds them.
struct GgufPreTokenizer {
  std::string pre_tokenizer;
  std::string normalizer = "null";
  bool ignore_merges = false;
};

std::optional<GgufPreTokenizer> pre_tokenizer(std::string_view pre) {
  const std::string byte_level =
      R"({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true})";
  const auto split_then_bytes = [](std::string_view pattern) {
    std::string out =
        R"({"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": )";
    append_json_string(out, pattern);
    out += R"(}, "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", )"
           R"("add_prefix_space": false, "trim_offsets": false, "use_regex": false}]})";
    return out;
  };
  if (pre == "gpt-2") return GgufPreTokenizer{byte_level};
  if (pre == "smollm") {
    return GgufPreTokenizer{R"({"type": "Sequence", "pretokenizers": [{"type": "Digits", )"
                            R"("individual_digits": true}, )" +
                            byte_level + "]}"};
  }
  if (pre == "llama-bpe")
    return GgufPreTokenizer{split_then_bytes(kLlama3SplitPattern), "null", true};
  if (pre == "qwen2") {
    return GgufPreTokenizer{split_then_bytes(kQwen2SplitPattern), R"({"type": "NFC"})", false};
  }
  return std::nullopt;
}

// tokenizer.ggml.token_type, checked: one per token, each one of llama.cpp's types; absent: none.
std::vector<std::int64_t> token_types(const gguf::Metadata& metadata, std::size_t tokens) {
  if (!metadata.contains("tokenizer.ggml.token_type")) return {};
  std::vector<std::int64_t> types = metadata.integers("tokenizer.ggml.token_type");
  if (types.size() != tokens) {
    throw Error("GGUF: tokenizer.ggml.token_type has " + std::to_string(types.size()) +
                " entries for " + std::to_string(tokens) + " tokens");
  }
  for (std::size_t id = 0; id < types.size(); ++id) {
    if (types[id] < 0 || types[id] > kLargestTokenType) {
      throw Error("GGUF: tokenizer.ggml.token_type[" + std::to_string(id) + "] is " +
                  std::to_string(types[id]) +
                  ", not one of llama.cpp's token types (0 to 6: undefined, normal, unknown, "
                  "control, user-defined, unused, byte)");
    }
  }
  return types;
}

// A token id the metadata names (`key`), or `fallback` (llama.cpp's default) when it has none
// and the vocabulary has that id; throws for an id out of range.
std::optional<std::size_t> token_id(const gguf::Metadata& metadata, const char* key,
                                    std::size_t tokens,
                                    std::optional<std::size_t> fallback = std::nullopt) {
  if (!metadata.contains(key)) {
    return fallback && *fallback < tokens ? fallback : std::nullopt;
  }
  const std::int64_t id = metadata.integer(key);
  if (id < 0 || std::size_t(id) >= tokens) {
    throw Error("GGUF: " + std::string(key) + " is " + std::to_string(id) + ", not one of the " +
                std::to_string(tokens) + " tokens");
  }
  return std::size_t(id);
}

bool flag(const gguf::Metadata& metadata, const char* key, bool fallback) {
  return metadata.contains(key) ? metadata.boolean(key) : fallback;
}

// The added tokens of llama.cpp's types that tokenizer.json lists as added (those its tokenizer
// matches in the text before splitting it): special for `special` types, normalized or not.
// `specials`: ids that are special whatever their type (the unknown, BOS and EOS tokens Hugging
// Face's Llama tokenizer adds as special tokens).
std::string added_tokens(const std::vector<std::string>& tokens,
                         const std::vector<std::int64_t>& types, bool unknown_is_special,
                         bool user_defined_normalized,
                         const std::vector<std::optional<std::size_t>>& specials = {}) {
  std::string json = "[";
  bool first = true;
  for (std::size_t id = 0; id < tokens.size(); ++id) {
    const std::int64_t type = id < types.size() ? types[id] : 1;
    bool special = type == kControlToken || (unknown_is_special && type == kUnknownToken);
    for (const std::optional<std::size_t>& other : specials) special = special || other == id;
    if (!special && type != kUserDefinedToken) continue;
    const bool normalized = !special && user_defined_normalized;
    json += first ? "" : ", ";
    first = false;
    json += R"({"id": )" + std::to_string(id) + R"(, "content": )";
    append_json_string(json, tokens[id]);
    json +=
        std::string(R"(, "single_word": false, "lstrip": false, "rstrip": false, "normalized": )") +
        (normalized ? "true" : "false") + R"(, "special": )" + (special ? "true" : "false") + "}";
  }
  return json + "]";
}

// A post-processor adding the BOS before the text and the EOS after it (each when given), or null.
std::string template_processing(const std::vector<std::string>& tokens,
                                std::optional<std::size_t> bos, std::optional<std::size_t> eos) {
  if (!bos && !eos) return "null";
  const auto name = [&](std::size_t id) {
    std::string out;
    append_json_string(out, tokens[id]);
    return out;
  };
  const auto item = [&](std::size_t id) {
    return R"({"SpecialToken": {"id": )" + name(id) + R"(, "type_id": 0}})";
  };
  std::string single = "[";
  if (bos) single += item(*bos) + ", ";
  single += R"({"Sequence": {"id": "A", "type_id": 0}})";
  if (eos) single += ", " + item(*eos);
  single += "]";
  std::string special = "{";
  for (const std::optional<std::size_t> id : {bos, eos}) {
    if (!id || (id == eos && bos == eos)) continue;
    special += special.size() > 1 ? ", " : "";
    special += name(*id) + R"(: {"id": )" + name(*id) + R"(, "ids": [)" + std::to_string(*id) +
               R"(], "tokens": [)" + name(*id) + "]}";
  }
  special += "}";
  return R"({"type": "TemplateProcessing", "single": )" + single +
         R"(, "pair": [], "special_tokens": )" + special + "}";
}

// The vocabulary as tokenizer.json's model.vocab: { token: id }.
std::string vocab_object(const std::vector<std::string>& tokens) {
  std::string json = "{";
  for (std::size_t id = 0; id < tokens.size(); ++id) {
    if (id != 0) json += ", ";
    append_json_string(json, tokens[id]);
    json += ": " + std::to_string(id);
  }
  return json + "}";
}

std::string not_read(const std::string& what) {
  return "this GGUF file's " + what + " is not read yet; supported: " + kGgufTokenizerModels +
         ". Pass loadCheckpoint its tokenizer.json";
}

// tokenizer.ggml.model "gpt2": byte-level BPE, its merges given, its pre-tokenizer by name.
GgufTokenizer byte_level_tokenizer(const gguf::Metadata& metadata) {
  const std::string pre_name =
      metadata.contains("tokenizer.ggml.pre") ? metadata.string("tokenizer.ggml.pre") : "gpt-2";
  const std::optional<GgufPreTokenizer> pre = pre_tokenizer(pre_name);
  if (!pre) {
    return {std::nullopt, "this GGUF file's pre-tokenizer (tokenizer.ggml.pre " + quoted(pre_name) +
                              ") is not read yet; supported: " + kGgufPreTokenizers +
                              ". Pass loadCheckpoint its tokenizer.json"};
  }
  const std::vector<std::string>& tokens = metadata.strings("tokenizer.ggml.tokens");
  const std::vector<std::string>& merges = metadata.strings("tokenizer.ggml.merges");
  const std::vector<std::int64_t> types = token_types(metadata, tokens.size());
  const std::optional<std::size_t> bos =
      token_id(metadata, "tokenizer.ggml.bos_token_id", tokens.size());
  const bool add_bos = flag(metadata, "tokenizer.ggml.add_bos_token", false);
  if (add_bos && !bos) {
    throw Error("GGUF: tokenizer.ggml.add_bos_token is true but there is no bos_token_id");
  }

  std::string json = R"({"version": "1.0", "added_tokens": )";
  json += added_tokens(tokens, types, false, true);
  json += R"(, "normalizer": )" + pre->normalizer + R"(, "pre_tokenizer": )" + pre->pre_tokenizer;
  json += R"(, "post_processor": )" +
          template_processing(tokens, add_bos ? bos : std::nullopt, std::nullopt);
  json += R"(, "model": {"type": "BPE", "dropout": null, "unk_token": null, "fuse_unk": false, )";
  json += std::string(R"("byte_fallback": false, "ignore_merges": )") +
          (pre->ignore_merges ? "true" : "false") + R"(, "vocab": )" + vocab_object(tokens);
  json += R"(, "merges": [)";
  for (std::size_t i = 0; i < merges.size(); ++i) {
    if (i != 0) json += ", ";
    append_json_string(json, merges[i]);
  }
  json += "]}}";
  return {std::move(json), ""};
}

// tokenizer.ggml.model "llama": a SentencePiece BPE vocabulary (pieces, scores, token types, no
// merges), as transformers' LlamaConverter (or GemmaConverter, for a general.architecture
// gemma*) writes its tokenizer.json: merges generated from the scores (sentencepiece_merges.hpp);
// normalizer Prepend("▁") when tokenizer.ggml.add_space_prefix (llama.cpp's default: true) and
// Replace(" ", "▁") (Gemma: Replace only, then Split(" ", MergedWithPrevious)); no
// pre-tokenizer; BPE with byte fallback, fuse_unk and the unknown token; the BOS before the text
// (add_bos_token, default true) and the EOS after it (add_eos_token, default false); unknown and
// control tokens as special added tokens, user-defined ones as added tokens not normalized.
GgufTokenizer sentencepiece_tokenizer(const gguf::Metadata& metadata) {
  std::vector<std::string> tokens = metadata.strings("tokenizer.ggml.tokens");
  if (tokens.empty()) throw Error("GGUF: tokenizer.ggml.tokens is empty");
  if (tokens.size() > kMaxGgufTokens) {
    throw Error("GGUF: tokenizer.ggml.tokens has " + std::to_string(tokens.size()) +
                " tokens, more than " + std::to_string(kMaxGgufTokens));
  }
  if (!metadata.contains("tokenizer.ggml.scores")) {
    throw Error(
        "GGUF: tokenizer.ggml.scores is missing: a SentencePiece tokenizer (tokenizer.ggml.model "
        "'llama') ranks its merges by its pieces' scores");
  }
  std::vector<float> scores = metadata.floats("tokenizer.ggml.scores");
  if (scores.size() != tokens.size()) {
    throw Error("GGUF: tokenizer.ggml.scores has " + std::to_string(scores.size()) +
                " entries for " + std::to_string(tokens.size()) + " tokens");
  }
  std::unordered_map<std::string_view, std::size_t> seen;
  seen.reserve(tokens.size());
  for (std::size_t id = 0; id < tokens.size(); ++id) {
    const std::string at = "GGUF: tokenizer.ggml.tokens[" + std::to_string(id) + "]";
    if (tokens[id].empty()) throw Error(at + " is empty");
    if (tokens[id].size() > kMaxGgufTokenBytes) {
      throw Error(at + " is longer than " + std::to_string(kMaxGgufTokenBytes) + " bytes");
    }
    if (const std::size_t bad = first_invalid_utf8(tokens[id]); bad != std::string_view::npos) {
      throw Error(at + " is not valid UTF-8 (at byte " + std::to_string(bad) + ")");
    }
    if (const auto [where, fresh] = seen.emplace(tokens[id], id); !fresh) {
      throw Error(at + " " + quoted(tokens[id]) + " is token " + std::to_string(where->second) +
                  " too");
    }
    if (!std::isfinite(scores[id])) {
      throw Error("GGUF: tokenizer.ggml.scores[" + std::to_string(id) + "] is not a finite number");
    }
  }
  const std::vector<std::int64_t> types = token_types(metadata, tokens.size());
  // llama.cpp's defaults for a SentencePiece vocabulary (llama_vocab::load)
  const std::optional<std::size_t> unk =
      token_id(metadata, "tokenizer.ggml.unknown_token_id", tokens.size(), 0);
  const std::optional<std::size_t> bos =
      token_id(metadata, "tokenizer.ggml.bos_token_id", tokens.size(), 1);
  const std::optional<std::size_t> eos =
      token_id(metadata, "tokenizer.ggml.eos_token_id", tokens.size(), 2);
  const bool add_bos = flag(metadata, "tokenizer.ggml.add_bos_token", true);
  const bool add_eos = flag(metadata, "tokenizer.ggml.add_eos_token", false);
  const bool space_prefix = flag(metadata, "tokenizer.ggml.add_space_prefix", true);
  if (add_bos && !bos) {
    throw Error("GGUF: tokenizer.ggml.add_bos_token is true but there is no bos_token_id");
  }
  if (add_eos && !eos) {
    throw Error("GGUF: tokenizer.ggml.add_eos_token is true but there is no eos_token_id");
  }
  const bool gemma = metadata.contains("general.architecture") &&
                     metadata.string("general.architecture").starts_with("gemma");
  // Byte fallback as llama.cpp's (each byte of a character not in the vocabulary as its <0xNN>
  // token) needs all 256 byte tokens or none (then such a character is the unknown token).
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::vector<std::string> missing_bytes;
  for (int b = 0; b < 256; ++b) {
    const std::string name = std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
    if (!seen.count(name)) missing_bytes.push_back(name);
  }
  if (!missing_bytes.empty() && missing_bytes.size() < 256) {
    return {std::nullopt,
            "this GGUF file's SentencePiece vocabulary has byte tokens for byte fallback but not " +
                std::to_string(missing_bytes.size()) + " of them (" + missing_bytes.front() +
                (missing_bytes.size() > 1 ? " …" : "") +
                "): a character needing one could not be tokenized as llama.cpp does. Pass "
                "loadCheckpoint its tokenizer.json"};
  }

  // GemmaConverter: a vocabulary without "\t" has it in place of <0x09> (`seen` views tokens)
  if (gemma && !seen.count("\t")) {
    if (const auto tab = seen.find("<0x09>"); tab != seen.end()) {
      const std::size_t id = tab->second;
      seen.clear();
      tokens[id] = "\t";
    }
  }
  // LlamaConverter and GemmaConverter give ids 0, 1 and 2 (<unk> <s> </s>, <pad> <eos> <bos>)
  // the score 0 before generating the merges.
  for (std::size_t id = 0; id < 3 && id < scores.size(); ++id) scores[id] = 0.0f;
  std::vector<PieceMerge> merges;
  try {
    merges = sentencepiece_merges(tokens, scores);
  } catch (const Error& error) {
    throw Error("GGUF: tokenizer.ggml.tokens: " + std::string(error.what()));
  }

  std::string json = R"({"version": "1.0", "added_tokens": )";
  json += added_tokens(tokens, types, true, false, {unk, bos, eos});
  const std::string replace = R"({"type": "Replace", "pattern": {"String": " "}, "content": "▁"})";
  json += R"(, "normalizer": )";
  if (gemma) {
    json += replace;
    json += R"(, "pre_tokenizer": {"type": "Split", "pattern": {"String": " "}, )"
            R"("behavior": "MergedWithPrevious", "invert": false})";
  } else {
    json += R"({"type": "Sequence", "normalizers": [)";
    if (space_prefix) json += R"({"type": "Prepend", "prepend": "▁"}, )";
    json += replace + "]}";
    json += R"(, "pre_tokenizer": null)";
  }
  json += R"(, "post_processor": )" +
          template_processing(tokens, add_bos ? bos : std::nullopt, add_eos ? eos : std::nullopt);
  json += R"(, "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": )"
          R"({"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"})";
  if (space_prefix && !gemma)
    json += R"(, {"type": "Strip", "content": " ", "start": 1, "stop": 0})";
  json += "]}";
  json += R"(, "model": {"type": "BPE", "dropout": null, "unk_token": )";
  if (unk) {
    append_json_string(json, tokens[*unk]);
  } else {
    json += "null";
  }
  json += R"(, "fuse_unk": true, "byte_fallback": true, "ignore_merges": false, "vocab": )" +
          vocab_object(tokens) + R"(, "merges": [)";
  for (std::size_t i = 0; i < merges.size(); ++i) {
    json += i == 0 ? "[" : ", [";
    append_json_string(json, tokens[std::size_t(merges[i].left)]);
    json += ", ";
    append_json_string(json, tokens[std::size_t(merges[i].right)]);
    json += "]";
  }
  json += "]}}";
  return {std::move(json), ""};
}

}  // namespace

GgufTokenizer gguf_tokenizer(const gguf::Metadata& metadata) {
  if (!metadata.contains("tokenizer.ggml.model")) {
    return {std::nullopt,
            "this GGUF file has no tokenizer (no tokenizer.ggml.model): pass loadCheckpoint its "
            "tokenizer.json"};
  }
  const std::string& model = metadata.string("tokenizer.ggml.model");
  if (model == "gpt2") return byte_level_tokenizer(metadata);
  if (model == "llama") return sentencepiece_tokenizer(metadata);
  return {std::nullopt, not_read("tokenizer (tokenizer.ggml.model " + quoted(model) + ")")};
}

}  // namespace attn
