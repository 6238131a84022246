// A GGUF file's tokenizer as tokenizer.json's text, see gguf_tokenizer.hpp.
#include "attention/text/gguf_tokenizer.hpp"

#include <cstdio>
#include <string_view>

#include "attention/error.hpp"
#include "attention/text/tokenizer_json.hpp"

namespace attn {

namespace {

// llama.cpp's token types (llama_token_type): 3 a control token, 4 a user-defined one.
constexpr std::int64_t kControlToken = 3, kUserDefinedToken = 4;

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

}  // namespace

GgufTokenizer gguf_tokenizer(const gguf::Metadata& metadata) {
  if (!metadata.contains("tokenizer.ggml.model")) {
    return {std::nullopt,
            "this GGUF file has no tokenizer (no tokenizer.ggml.model): pass loadCheckpoint its "
            "tokenizer.json"};
  }
  const std::string& model = metadata.string("tokenizer.ggml.model");
  if (model != "gpt2") {
    return {std::nullopt, "this GGUF file's tokenizer (tokenizer.ggml.model " + quoted(model) +
                              (model == "llama" ? ", SentencePiece" : "") +
                              ") is not read yet; supported: gpt2 (byte-level BPE). Pass "
                              "loadCheckpoint its tokenizer.json"};
  }
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
  std::vector<std::int64_t> types;
  if (metadata.contains("tokenizer.ggml.token_type")) {
    types = metadata.integers("tokenizer.ggml.token_type");
    if (types.size() != tokens.size()) {
      throw Error("GGUF: tokenizer.ggml.token_type has " + std::to_string(types.size()) +
                  " entries for " + std::to_string(tokens.size()) + " tokens");
    }
  }
  const auto id_of = [&](const char* key) -> std::optional<std::size_t> {
    if (!metadata.contains(key)) return std::nullopt;
    const std::int64_t id = metadata.integer(key);
    if (id < 0 || std::size_t(id) >= tokens.size()) {
      throw Error("GGUF: " + std::string(key) + " is " + std::to_string(id) + ", not one of the " +
                  std::to_string(tokens.size()) + " tokens");
    }
    return std::size_t(id);
  };
  const std::optional<std::size_t> bos = id_of("tokenizer.ggml.bos_token_id");
  const bool add_bos = metadata.contains("tokenizer.ggml.add_bos_token") &&
                       metadata.boolean("tokenizer.ggml.add_bos_token");
  if (add_bos && !bos) {
    throw Error("GGUF: tokenizer.ggml.add_bos_token is true but there is no bos_token_id");
  }

  std::string json = R"({"version": "1.0", "added_tokens": [)";
  bool first = true;
  for (std::size_t id = 0; id < types.size(); ++id) {
    if (types[id] != kControlToken && types[id] != kUserDefinedToken) continue;
    const bool special = types[id] == kControlToken;
    json += first ? "" : ", ";
    first = false;
    json += R"({"id": )" + std::to_string(id) + R"(, "content": )";
    append_json_string(json, tokens[id]);
    json +=
        std::string(R"(, "single_word": false, "lstrip": false, "rstrip": false, "normalized": )") +
        (special ? "false" : "true") + R"(, "special": )" + (special ? "true" : "false") + "}";
  }
  json += R"(], "normalizer": )" + pre->normalizer + R"(, "pre_tokenizer": )" + pre->pre_tokenizer;
  json += R"(, "post_processor": )";
  if (add_bos) {
    std::string name;
    append_json_string(name, tokens[*bos]);
    json += R"({"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": )" + name +
            R"(, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}], "pair": [], )"
            R"("special_tokens": {)" +
            name + R"(: {"id": )" + name + R"(, "ids": [)" + std::to_string(*bos) +
            R"(], "tokens": [)" + name + "]}}}";
  } else {
    json += "null";
  }
  json += R"(, "model": {"type": "BPE", "dropout": null, "unk_token": null, "fuse_unk": false, )";
  json += std::string(R"("byte_fallback": false, "ignore_merges": )") +
          (pre->ignore_merges ? "true" : "false") + R"(, "vocab": {)";
  for (std::size_t id = 0; id < tokens.size(); ++id) {
    if (id != 0) json += ", ";
    append_json_string(json, tokens[id]);
    json += ": " + std::to_string(id);
  }
  json += R"(}, "merges": [)";
  for (std::size_t i = 0; i < merges.size(); ++i) {
    if (i != 0) json += ", ";
    append_json_string(json, merges[i]);
  }
  json += "]}}";
  return {std::move(json), ""};
}

}  // namespace attn
