// The bounds that keep one call inside a browser tab's memory, and the checks of a layer's
// configuration and of a forward's sizes against them.
#pragma once

#include <cstddef>
#include <span>

#include "attention/layer/options.hpp"

namespace attn {

inline constexpr std::size_t kMaxModelDim = 4096;
inline constexpr std::size_t kMaxHeads = 256;
inline constexpr std::size_t kMaxSequence = 65536;  // n and kv_n
// n·kv_n·(heads if kept), on the paths that hold the scores: weights or a trace requested. The
// output-only path (flash_attention) holds O(n·d) and has no such limit.
inline constexpr std::size_t kMaxScoreValues = std::size_t{1} << 26;
inline constexpr std::size_t kMaxTraceValues = std::size_t{1} << 22;  // traced heads·n·kv_n

// Checks the config's sizes (dModel, heads, headDim, kvHeads dividing heads) and its RoPE
// (even d_k, a base above 0, one finite frequency per pair if given; none of it without
// positional 'rope') and returns d_k. Throws attn::Error naming the bad value and the accepted
// range.
std::size_t checked_head_dim(const LayerConfig& config);

// Checks a forward's sizes for a layer of d_model and `heads` heads: n and kv_n, the lengths of
// x and kv, the mask, the score, weight, preview and trace limits, and traceHead. Values
// (finiteness, float range) are checked by the layer.
void check_forward_sizes(std::size_t d_model, std::size_t heads, std::size_t x_size,
                         const ForwardOptions& options);

}  // namespace attn
