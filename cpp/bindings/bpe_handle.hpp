// BpeHandle: GPT-2's byte-level BPE for JS checkpoints (ATTN_BINDINGS_TRAINING builds only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attention/text/bpe_tokenizer.hpp"
#include "bindings/common.hpp"

namespace attn::bindings {

// GPT-2's byte-level BPE over a vocabulary and merges given as text (one entry per line).
class BpeHandle {
 public:
  val configure(const std::string& vocab, const std::string& merges, std::size_t model_vocab);
  // { ids: Int32Array view, tokens: [Uint8Array bytes] } of UTF-8 (or any) bytes.
  val encode(val bytes);
  // Each id's readable text (BpeTokenizer::token_text).
  val tokenTexts(val ids) const;

 private:
  std::unique_ptr<attn::BpeTokenizer> tokenizer_;
  std::vector<std::int32_t> ids_;
};

}  // namespace attn::bindings
