// The tokenizer a GGUF file's metadata carries (tokenizer.ggml.*), as the tokenizer.json it stands
// for: a byte-level BPE (tokenizer.ggml.model "gpt2": tokens, merges, token types, the
// pre-tokenizer named by tokenizer.ggml.pre, BOS when add_bos_token) written as Hugging Face's
// tokenizer.json for the same vocabulary would hold it, so the one tokenizer.json reader builds it.
#pragma once

#include <optional>
#include <string>

#include "attention/io/gguf.hpp"

namespace attn {

// The pre-tokenizers read, by tokenizer.ggml.pre (llama.cpp's names): gpt-2 (GPT-2's ByteLevel
// regex), smollm (digits one by one, then GPT-2's), llama-bpe (Llama 3's Split pattern, merges
// ignored for a word in the vocabulary), qwen2 (Qwen2's pattern, NFC first).
inline constexpr const char* kGgufPreTokenizers = "gpt-2, smollm, llama-bpe, qwen2";

// A GGUF file's tokenizer: tokenizer.json's text, or why there is none (the message tokenize then
// gives: no tokenizer metadata, a SentencePiece model, an unknown pre-tokenizer).
struct GgufTokenizer {
  std::optional<std::string> json;
  std::string missing;
};

// The file's tokenizer.ggml.* read: malformed metadata (arrays of other types or lengths, a merge
// without a space, an id out of range) throws attn::Error naming the key; a kind not read gives
// `missing`.
GgufTokenizer gguf_tokenizer(const gguf::Metadata& metadata);

}  // namespace attn
