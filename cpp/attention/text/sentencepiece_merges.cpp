// A SentencePiece vocabulary's BPE merges, see sentencepiece_merges.hpp.
#include "attention/text/sentencepiece_merges.hpp"

#include <algorithm>
#include <cstring>
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

// Polynomial hashes of byte strings (mod 2^64): a piece's prefixes' hashes in one pass, any
// substring's from two of them, so each split's halves are looked up in O(1).
constexpr std::uint64_t kBase = 0x100000001B3ull;

// The pieces by (hash, byte length), each candidate checked byte for byte; `compared` counts the
// bytes checked, bounded by kMaxSplitBytes.
class PieceIndex {
 public:
  explicit PieceIndex(const std::vector<std::string>& pieces) : pieces_(pieces) {
    next_.assign(pieces.size(), -1);
    first_.reserve(pieces.size());
    for (std::size_t id = pieces.size(); id-- > 0;) {  // chains in id order: the first id wins
      const std::string& piece = pieces[id];
      std::uint64_t hash = 0;
      for (const char c : piece) hash = hash * kBase + static_cast<unsigned char>(c);
      const auto [at, fresh] = first_.try_emplace(key(hash, piece.size()), std::int32_t(id));
      if (!fresh) {
        next_[id] = at->second;
        at->second = std::int32_t(id);
      }
    }
  }

  // The id of the piece `text` (whose hash is `hash`), or -1.
  std::int32_t find(std::string_view text, std::uint64_t hash) {
    const auto at = first_.find(key(hash, text.size()));
    for (std::int32_t id = at == first_.end() ? -1 : at->second; id >= 0;
         id = next_[std::size_t(id)]) {
      const std::string& piece = pieces_[std::size_t(id)];
      if (piece.size() != text.size()) continue;
      compared_ += text.size();
      if (compared_ > kMaxSplitBytes) {
        throw Error(
            "the SentencePiece vocabulary's pieces are too long in all to generate its merges "
            "from: checking their splits compares more than " +
            std::to_string(kMaxSplitBytes) + " bytes");
      }
      if (std::memcmp(piece.data(), text.data(), text.size()) == 0) return id;
    }
    return -1;
  }

 private:
  static std::uint64_t key(std::uint64_t hash, std::size_t bytes) {
    return hash ^ (std::uint64_t(bytes) * 0x9E3779B97F4A7C15ull);
  }
  const std::vector<std::string>& pieces_;
  std::unordered_map<std::uint64_t, std::int32_t> first_;
  std::vector<std::int32_t> next_;  // the next piece with the same key, or -1
  std::uint64_t compared_ = 0;
};

}  // namespace

std::vector<PieceMerge> sentencepiece_merges(const std::vector<std::string>& pieces,
                                             const std::vector<float>& scores) {
  if (scores.size() != pieces.size()) {
    throw Error("sentencepiece_merges: " + std::to_string(scores.size()) + " scores for " +
                std::to_string(pieces.size()) + " pieces");
  }
  PieceIndex index(pieces);
  std::vector<Split> splits;
  std::vector<std::uint64_t> prefix_hash, power;  // [bytes + 1]
  for (std::size_t id = 0; id < pieces.size(); ++id) {
    const std::string_view piece = pieces[id];
    const std::size_t bytes = piece.size();
    prefix_hash.assign(bytes + 1, 0);
    if (power.size() < bytes + 1) {
      power.resize(bytes + 1);
      power[0] = 1;
      for (std::size_t i = 1; i <= bytes; ++i) power[i] = power[i - 1] * kBase;
    }
    for (std::size_t i = 0; i < bytes; ++i)
      prefix_hash[i + 1] = prefix_hash[i] * kBase + static_cast<unsigned char>(piece[i]);
    std::uint32_t chars = 1;
    for (std::size_t at = 1; at < bytes; ++at) chars += !continuation_byte(piece[at]);
    const std::size_t first = splits.size();
    std::uint32_t left_chars = 0;
    for (std::size_t at = 1; at < bytes; ++at) {
      if (continuation_byte(piece[at])) continue;
      ++left_chars;
      const std::int32_t left = index.find(piece.substr(0, at), prefix_hash[at]);
      if (left < 0) continue;
      const std::uint64_t right_hash = prefix_hash[bytes] - prefix_hash[at] * power[bytes - at];
      const std::int32_t right = index.find(piece.substr(at), right_hash);
      if (right < 0) continue;
      splits.push_back({scores[id], left_chars, chars - left_chars, PieceMerge{left, right}});
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
