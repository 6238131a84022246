// The BPE merges of a SentencePiece vocabulary (pieces with scores, no merges), generated as
// Hugging Face's converter generates them for the tokenizer.json it writes (transformers'
// convert_slow_tokenizer.py, generate_merges as SentencePieceExtractor calls it with the pieces'
// scores): every split of every piece into two pieces of the vocabulary is a merge, ranked by the
// merged piece's score. Merging the best-ranked pair first is then llama.cpp's SentencePiece
// tokenizer (llm_tokenizer_spm: the adjacent pair whose concatenation is the best-scored piece).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// A merge: the left and right pieces' ids (their concatenation is a piece too).
struct PieceMerge {
  std::int32_t left = 0;
  std::int32_t right = 0;
};

// pieces: the vocabulary by id (unique, valid UTF-8); scores: one per piece. The merges best
// first, in generate_merges' order: the merged piece's score, highest first, then the left
// piece's length in characters, longest first, then the right's; equal keys keep the order they
// were found in (pieces by id; a piece's splits by left id, then right id). A piece is split at
// each character boundary, each half looked up by its hash (the prefixes' polynomial hashes in one
// pass: O(total piece length)) and checked byte for byte against the pieces of that hash: the
// bytes compared are bounded by kMaxSplitBytes in all (a real vocabulary compares about its
// merges' length; only pieces that are prefixes of one another by the hundred reach it), past it
// throws attn::Error, as for scores of another length. Pieces repeated: the first id is the one.
inline constexpr std::uint64_t kMaxSplitBytes = std::uint64_t{1} << 28;
std::vector<PieceMerge> sentencepiece_merges(const std::vector<std::string>& pieces,
                                             const std::vector<float>& scores);

}  // namespace attn
