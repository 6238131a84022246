// Hugging Face's tokenizer.json read into a BpeTokenizer; every kind it does not support refused.
#pragma once

#include <string_view>

#include "attention/text/bpe_tokenizer.hpp"
#include "attention/text/normalizer.hpp"

namespace attn {

// The Split patterns the tokenizers know (tokenizer.json's, as the files hold them): Llama 3's,
// and Qwen2's (the same with \p{N} for \p{N}{1,3}).
inline constexpr std::string_view kLlama3SplitPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
inline constexpr std::string_view kQwen2SplitPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// The BpeSpec of tokenizer.json's text: a BPE model (byte-level as GPT-2, GPT-NeoX/Pythia,
// Llama 3, Qwen2/Qwen3, OLMo 2 and SmolLM2 ship it, or SentencePiece-style as Llama 2, TinyLlama,
// Mistral, Phi-3 and Gemma 2/3) with its added tokens, normalizer, pre-tokenizer and
// post-processor. Nothing in the file is run: a Split regex must be one of the known patterns (or
// the pattern a literal String). Throws attn::Error for invalid UTF-8 or JSON (naming the
// byte), a wrong type (naming the key and what it must be), or a kind this tokenizer does not
// support (naming it and what is supported).
//
// Read as @huggingface/tokenizers reads it, with defaults for absent keys; beyond it:
// - a file without a "pre_tokenizer" key at all (a hand-written { model: { vocab, merges } }, not
//   a file the library writes, which always has the key) is GPT-2's byte-level BPE;
// - the decoder, truncation and padding are not read (token texts are the core's own).
// Where the reference (the Hub's JS implementation, which the tests compare with) and the Rust
// library differ, this follows the reference: Digits splits ASCII digits only (JavaScript's \d;
// Rust: every numeric character); (?i:...) folds ASCII letters only; ByteLevel's own regex has
// JavaScript's \s (U+FEFF, not U+0085) while Split's \s is Oniguruma's; single_word is read but
// not applied; Metaspace's "first" is the first stretch before any added token. Two exceptions,
// as the Rust library: Metaspace with split true starts a word at each ▁ (the reference keeps one
// word, which gives the same ids unless a merge crosses a ▁); Split with a String and
// "MergedWithPrevious" (Gemma's) ends a word after each match (the reference isolates it; in
// Gemma's pipeline no space reaches it, its normalizer having made them ▁).
BpeSpec tokenizer_json_spec(std::string_view text);

// The spec of GPT-2's vocab.json (an object { token: id }) and merges.txt, both as text: the
// tokenizer a checkpoint without a tokenizer.json ships (vocab.json's ids checked as
// tokenizer.json's are; gpt2_files_spec says the rest).
BpeSpec vocab_json_spec(std::string_view vocab_json, std::string_view merges);

// The tokenizer of tokenizer.json's text; nfc: see normalizer.hpp (needed for a normalizer NFC).
BpeTokenizer read_tokenizer_json(std::string_view text, UnicodeNormalize nfc);

}  // namespace attn
