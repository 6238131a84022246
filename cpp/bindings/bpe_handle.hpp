// BpeHandle: a checkpoint's BPE tokenizer for JS checkpoints (ATTN_BINDINGS_FULL_API builds only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attention/text/bpe_tokenizer.hpp"
#include "bindings/common.hpp"

namespace attn::bindings {

// A BpeTokenizer from GPT-2's vocab.json and merges.txt, or from tokenizer.json, each as its text.
class BpeHandle {
 public:
  // vocab.json's and merges.txt's text: the number of token ids.
  val configure(const std::string& vocab_json, const std::string& merges, std::size_t model_vocab);
  // { tokens: number of ids, prefix: [ids], suffix: [ids] (the post-processor's special tokens
  // around a text's, e.g. a BOS, which encode adds), nfc: whether encode normalizes to NFC }.
  // NFC is JavaScript's String.prototype.normalize, called once per stretch of text.
  val configureJson(const std::string& json, std::size_t model_vocab);
  // { ids: Int32Array view, tokens: [Uint8Array bytes] } of UTF-8 (or any) bytes, with the
  // post-processor's special tokens.
  val encode(val bytes);
  // Each id's readable text (BpeTokenizer::token_text).
  val tokenTexts(val ids) const;

 private:
  std::unique_ptr<attn::BpeTokenizer> tokenizer_;
  std::vector<std::int32_t> ids_;
};

}  // namespace attn::bindings
