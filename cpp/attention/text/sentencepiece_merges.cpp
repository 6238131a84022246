// A SentencePiece vocabulary's BPE merges, see sentencepiece_merges.hpp.
#include "attention/text/sentencepiece_merges.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "attention/error.hpp"

namespace attn {

namespace {

// A split of one piece into two pieces, with what generate_merges sorts it by.
struct Split {
  float score;                // the merged piece's
  std::uint32_t left_chars;   // the left piece's length in characters
  std::uint32_t right_chars;  // the right piece's
  PieceMerge merge;
};

bool continuation_byte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

}  // namespace

std::vector<PieceMerge> sentencepiece_merges(const std::vector<std::string>& pieces,
                                             const std::vector<float>& scores) {
  if (scores.size() != pieces.size()) {
    throw Error("sentencepiece_merges: " + std::to_string(scores.size()) + " scores for " +
                std::to_string(pieces.size()) + " pieces");
  }
  std::uint64_t split_bytes = 0;
  for (const std::string& piece : pieces) split_bytes += std::uint64_t(piece.size()) * piece.size();
  if (split_bytes > kMaxSplitBytes) {
    throw Error(
        "the SentencePiece vocabulary's pieces are too long in all to generate its merges "
        "from: splitting them hashes " +
        std::to_string(split_bytes) + " bytes, more than the limit of " +
        std::to_string(kMaxSplitBytes));
  }
  std::unordered_map<std::string_view, std::int32_t> id_of;
  id_of.reserve(pieces.size());
  for (std::size_t id = 0; id < pieces.size(); ++id) id_of.emplace(pieces[id], std::int32_t(id));

  std::vector<Split> splits;
  std::vector<std::size_t> boundaries;  // byte offsets of a piece's characters after the first
  for (std::size_t id = 0; id < pieces.size(); ++id) {
    const std::string_view piece = pieces[id];
    boundaries.clear();
    for (std::size_t at = 1; at < piece.size(); ++at) {
      if (!continuation_byte(piece[at])) boundaries.push_back(at);
    }
    const std::size_t first = splits.size();
    const auto chars = std::uint32_t(boundaries.size() + 1);
    for (std::size_t k = 0; k < boundaries.size(); ++k) {
      const auto left = id_of.find(piece.substr(0, boundaries[k]));
      if (left == id_of.end()) continue;
      const auto right = id_of.find(piece.substr(boundaries[k]));
      if (right == id_of.end()) continue;
      const auto left_chars = std::uint32_t(k + 1);
      splits.push_back(
          {scores[id], left_chars, chars - left_chars, PieceMerge{left->second, right->second}});
    }
    std::sort(splits.begin() + std::ptrdiff_t(first), splits.end(),
              [](const Split& a, const Split& b) {
                return a.merge.left != b.merge.left ? a.merge.left < b.merge.left
                                                    : a.merge.right < b.merge.right;
              });
  }
  // sorted(key=(score, len(left), len(right)), reverse=True): descending, and stable
  std::stable_sort(splits.begin(), splits.end(), [](const Split& a, const Split& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.left_chars != b.left_chars) return a.left_chars > b.left_chars;
    return a.right_chars > b.right_chars;
  });
  std::vector<PieceMerge> merges;
  merges.reserve(splits.size());
  for (const Split& split : splits) merges.push_back(split.merge);
  return merges;
}

}  // namespace attn
