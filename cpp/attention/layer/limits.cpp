// The configuration and forward-size checks against the limits (see limits.hpp).
#include "attention/layer/limits.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "attention/error.hpp"
#include "attention/ops/masks.hpp"
#include "attention/ops/max_pool.hpp"

namespace attn {

namespace {

std::string str(std::uint64_t value) {
  return std::to_string(value);
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// "1, 2, 4, 8" style list of the head counts that divide d_model (for the error message).
std::string divisors_of(std::size_t d_model) {
  std::string list;
  for (std::size_t h = 1; h <= d_model && h <= 64; ++h) {
    if (d_model % h == 0) list += (list.empty() ? "" : ", ") + str(h);
  }
  return list;
}

void check_length(std::uint64_t length, const char* name) {
  if (length > kMaxSequence) {
    throw Error(std::string(name) + " = " + str(length) + " exceeds the limit of " +
                str(kMaxSequence) + " tokens");
  }
}

// The RoPE spec: refused without positional 'rope' unless it is the default, and checked
// (even d_k, base, frequencies) with it.
void check_rope(const LayerConfig& config, std::size_t head_dim) {
  const RopeSpec& rope = config.rope;
  const bool is_default = rope.pairing == RopePairing::Interleaved && rope.base == kRopeBase &&
                          rope.frequencies.empty();
  if (config.positional != PositionalKind::Rope) {
    if (!is_default || rope.rotary_dims != 0) {
      throw Error(std::string(is_default ? "RoPE's rotary dims were given"
                                         : "a RoPE pairing, base or frequencies was given") +
                  ", but positional is '" + positional_kind_name(config.positional) +
                  "': they apply to positional 'rope'");
    }
    return;
  }
  if (rope.rotary_dims == 0 && head_dim % 2 != 0) {
    throw Error("RoPE rotates pairs of dimensions, so d_k must be even; d_k = " + str(head_dim));
  }
  if (rope.rotary_dims != 0 && (rope.rotary_dims % 2 != 0 || rope.rotary_dims > head_dim)) {
    throw Error(
        "RoPE's rotary dims (the first columns of a head it turns, in pairs) must be even "
        "and at most d_k = " +
        str(head_dim) + ", got " + str(rope.rotary_dims));
  }
  const std::size_t rotated = rope.rotated(head_dim);
  if (!std::isfinite(rope.base) || !(rope.base > 0.0)) {
    throw Error("the RoPE base (rope_theta) must be a finite number above 0, got " +
                number(rope.base));
  }
  if (!rope.frequencies.empty()) {
    if (rope.frequencies.size() != rotated / 2) {
      throw Error("RoPE frequencies: expected one per pair of dimensions, " +
                  std::string(rope.rotary_dims ? "rotary dims" : "d_k") +
                  " / 2 = " + str(rotated / 2) + ", got " + str(rope.frequencies.size()));
    }
    for (std::size_t i = 0; i < rope.frequencies.size(); ++i) {
      const double f = rope.frequencies[i];
      if (!std::isfinite(f) || f < 0.0) {
        throw Error("RoPE frequency θ_" + str(i) + " must be finite and at least 0, got " +
                    number(f));
      }
    }
  }
}

}  // namespace

std::size_t checked_head_dim(const LayerConfig& config) {
  if (config.d_model == 0 || config.d_model > kMaxModelDim) {
    throw Error("dModel must be between 1 and " + str(kMaxModelDim) + ", got " +
                str(config.d_model));
  }
  if (config.heads == 0 || config.heads > kMaxHeads) {
    throw Error("heads must be between 1 and " + str(kMaxHeads) + ", got " + str(config.heads));
  }
  std::size_t head_dim = config.head_dim;
  if (head_dim == 0) {
    if (config.d_model % config.heads != 0) {
      throw Error("heads must divide dModel (d_k = dModel / heads): " + str(config.d_model) +
                  " is not divisible by " + str(config.heads) +
                  "; possible head counts: " + divisors_of(config.d_model));
    }
    head_dim = config.d_model / config.heads;
  } else if (head_dim > kMaxModelDim) {
    throw Error("headDim must be at most " + str(kMaxModelDim) + ", got " + str(head_dim));
  }
  // Grouped-query attention: each key/value head serves heads / kv_heads query heads.
  const std::string heads = "heads = " + str(config.heads);
  const std::string kv = "kvHeads = " + str(config.kv_heads);
  const std::string possible = "; possible kvHeads: " + divisors_of(config.heads);
  if (config.kv_heads > config.heads) {
    const std::string why = "each key/value head serves a group of query heads";
    throw Error("kvHeads must be at most heads (" + why + "): " + kv + " > " + heads + possible);
  }
  if (config.kv_heads != 0 && config.heads % config.kv_heads != 0) {
    const std::string why = "query head h reads key/value head h / (heads / kvHeads)";
    throw Error("kvHeads must divide heads (" + why + "): " + heads + " is not divisible by " + kv +
                possible);
  }
  check_rope(config, head_dim);
  if (!(config.scale >= 0.0 && std::isfinite(config.scale))) {
    throw Error("the scores' scale must be a finite number above 0 (or 0 for 1/√d_k), got " +
                number(config.scale));
  }
  if (!(config.softcap >= 0.0 && std::isfinite(config.softcap))) {
    throw Error("the scores' soft-cap must be a finite number above 0 (or 0 for none), got " +
                number(config.softcap));
  }
  if (!(config.qk_norm_eps > 0.0 && std::isfinite(config.qk_norm_eps))) {
    throw Error("the q/k norms' ε (qkNormEps) must be a finite number above 0, got " +
                number(config.qk_norm_eps));
  }
  return head_dim;
}

void check_forward_sizes(std::size_t d_model, std::size_t heads, std::size_t x_size,
                         const ForwardOptions& options) {
  // Sizes are multiplied in 64 bits: size_t is 32 bits in wasm and n * kv_n can wrap.
  const std::uint64_t d = d_model;
  const std::uint64_t n = options.n;
  if (n == 0) throw Error("n must be at least 1 (the number of query tokens), got 0");
  check_length(n, "n");
  if (x_size != n * d) {
    throw Error("x has " + str(x_size) + " values, expected n * dModel = " + str(n) + " * " +
                str(d) + " = " + str(n * d));
  }
  const std::uint64_t kv_n = options.cross ? options.kv_n : n;
  if (options.cross) {
    if (kv_n == 0) throw Error("kvN must be at least 1 for cross-attention, got 0");
    check_length(kv_n, "kvN");
    if (options.kv.size() != kv_n * d) {
      throw Error("kv has " + str(options.kv.size()) + " values, expected kvN * dModel = " +
                  str(kv_n) + " * " + str(d) + " = " + str(kv_n * d));
    }
  }
  validate_mask(options.mask, n, kv_n);
  const std::uint64_t per_head = n * kv_n;
  const bool holds_scores = options.want_weights || options.want_trace || options.preview_side > 0;
  if (holds_scores && per_head > kMaxScoreValues) {
    throw Error("n * kvN = " + str(per_head) + " attention scores per head exceed the limit of " +
                str(kMaxScoreValues));
  }
  const std::uint64_t all_heads = per_head * heads;
  if (options.want_weights && all_heads > kMaxScoreValues) {
    throw Error("heads * n * kvN = " + str(all_heads) + " attention weights exceed the limit of " +
                str(kMaxScoreValues) + "; pass weights: false to compute the output only");
  }
  if (options.preview_side > kMaxSequence) {
    throw Error("preview must be a side of at most " + str(kMaxSequence) + " cells, got " +
                str(options.preview_side));
  }
  if (options.preview_side > 0) {
    // n and kv_n are within kMaxSequence here (checked above).
    const std::size_t step = pool_step(n, kv_n, options.preview_side);
    const std::uint64_t pooled =
        std::uint64_t{heads} * pooled_size(n, step) * pooled_size(kv_n, step);
    if (pooled > kMaxScoreValues) {
      throw Error("a preview of heads * " + str(pooled / heads) + " cells = " + str(pooled) +
                  " values exceeds the limit of " + str(kMaxScoreValues) +
                  "; use a smaller preview side");
    }
  }
  if (options.trace_head < -1 || options.trace_head >= int(heads)) {
    throw Error("traceHead must be -1 (every head) or a head from 0 to " + str(heads - 1) +
                ", got " + std::to_string(options.trace_head));
  }
  const std::uint64_t traced = options.trace_head >= 0 ? per_head : all_heads;
  if (options.want_trace && traced > kMaxTraceValues) {
    throw Error("a trace of " + std::string(options.trace_head >= 0 ? "" : "heads * ") +
                "n * kvN = " + str(traced) + " cells per step exceeds the limit of " +
                str(kMaxTraceValues) +
                "; use fewer tokens or heads, trace one head (traceHead), or pass trace: false");
  }
}

}  // namespace attn
