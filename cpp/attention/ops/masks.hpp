// Attention masks: which keys each query may see (causal, key padding, sliding window,
// prefix-LM, explicit cells), and writing -inf into the scores of the hidden ones.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "attention/option_kinds.hpp"
#include "attention/tensor.hpp"

namespace attn {

// Throws attn::Error if the spec does not fit n queries and kv_n keys (padding or cell
// vectors of the wrong length, a sliding window of 0).
void validate_mask(const MaskSpec& spec, std::size_t n, std::size_t kv_n);

// True iff query i may attend to key j under the spec's kind, padding and cells.
inline bool is_visible(const MaskSpec& spec, std::size_t i, std::size_t j, std::size_t kv_n) {
  if (!spec.key_padding.empty() && spec.key_padding[j] != 0) return false;
  if (!spec.cells.empty() && spec.cells[i * kv_n + j] != 0) return false;
  switch (spec.kind) {
    case MaskKind::None:
      return true;
    case MaskKind::Causal:
      return j <= i;
    case MaskKind::SlidingWindow:
      return j <= i && i - j < spec.window;
    case MaskKind::PrefixLM:
      return j < spec.prefix || j <= i;
  }
  return true;
}

// The keys query i may see under the spec's kind alone (key padding and cells aside), as the
// range [begin, end) of key indices; empty when begin >= end. Neither bound ever decreases as i
// grows, so a block of queries [i0, i1) sees at most keys [begin(i0), end(i1 - 1)): tiled
// kernels skip every key block outside it (what makes causal attention cheaper).
struct KeyRange {
  std::size_t begin = 0;
  std::size_t end = 0;
};
inline KeyRange visible_keys(const MaskSpec& spec, std::size_t i, std::size_t kv_n) {
  const std::size_t through_i = i + 1 < kv_n ? i + 1 : kv_n;  // keys 0 … i
  switch (spec.kind) {
    case MaskKind::None:
      return {0, kv_n};
    case MaskKind::Causal:
      return {0, through_i};
    case MaskKind::SlidingWindow:
      return {i + 1 > spec.window ? i + 1 - spec.window : 0, through_i};
    case MaskKind::PrefixLM:
      return {0, std::max(through_i, spec.prefix < kv_n ? spec.prefix : kv_n)};
  }
  return {0, kv_n};
}

// True iff the spec has per-key or per-cell flags (key padding, cells) that can hide keys
// inside visible_keys' range, so kernels must check cell by cell there.
inline bool has_holes(const MaskSpec& spec) {
  return !spec.key_padding.empty() || !spec.cells.empty();
}
// Whether key j is hidden from query i by key padding or cells (the range aside).
inline bool in_hole(const MaskSpec& spec, std::size_t i, std::size_t j, std::size_t kv_n) {
  return (!spec.key_padding.empty() && spec.key_padding[j] != 0) ||
         (!spec.cells.empty() && spec.cells[i * kv_n + j] != 0);
}

// True iff the spec may hide something (a kind other than None, a padded key or a hidden
// cell); false lets the forward skip masking entirely.
bool masks_anything(const MaskSpec& spec);

// visible [n * kv_n]: 1 where query i may attend to key j. Validates first.
void build_visibility(const MaskSpec& spec, std::size_t n, std::size_t kv_n,
                      std::vector<std::uint8_t>& visible);

// scores_ij = -inf where visible_ij == 0.  scores [n, kv_n], visible [n * kv_n].
void apply_mask(MatView scores, const std::uint8_t* visible);

}  // namespace attn
