// The tokenizer a GGUF file's metadata carries (tokenizer.ggml.*), as the tokenizer.json it stands
// for, so the one tokenizer.json reader builds it: a byte-level BPE (tokenizer.ggml.model "gpt2":
// tokens, merges, token types, the pre-tokenizer named by tokenizer.ggml.pre, BOS when
// add_bos_token) or a SentencePiece BPE ("llama": Llama 2, TinyLlama, Mistral, Phi-3, Gemma;
// tokens, scores, token types, BOS/EOS/unknown ids, add_bos/add_eos/add_space_prefix; its merges
// generated from the scores) written as Hugging Face's tokenizer.json for the same vocabulary
// holds it (transformers' converters: GPT2Converter and the like; LlamaConverter, GemmaConverter).
#pragma once

#include <optional>
#include <string>

#include "attention/io/gguf.hpp"

namespace attn {

// The pre-tokenizers read, by tokenizer.ggml.pre (llama.cpp's names): gpt-2 (GPT-2's ByteLevel
// regex), smollm (digits one by one, then GPT-2's), llama-bpe (Llama 3's Split pattern, merges
// ignored for a word in the vocabulary), qwen2 (Qwen2's pattern, NFC first).
inline constexpr const char* kGgufPreTokenizers = "gpt-2, smollm, llama-bpe, qwen2";
// The tokenizer.ggml.model kinds read.
inline constexpr const char* kGgufTokenizerModels =
    "gpt2 (byte-level BPE), llama (SentencePiece BPE)";

// A GGUF file's tokenizer: tokenizer.json's text, or why there is none (the message tokenize then
// gives: no tokenizer metadata, a tokenizer.ggml.model not read (bert, t5, …), an unknown
// pre-tokenizer, a SentencePiece vocabulary with only some of the 256 byte tokens).
struct GgufTokenizer {
  std::optional<std::string> json;
  std::string missing;
};

// The file's tokenizer.ggml.* read: malformed metadata (arrays of other types or lengths, a merge
// without a space, an id out of range, a token type out of range; for SentencePiece: scores
// missing, of another length or not finite, a token empty, repeated or not UTF-8) throws
// attn::Error naming the key; a kind not read gives `missing`.
GgufTokenizer gguf_tokenizer(const gguf::Metadata& metadata);

}  // namespace attn
