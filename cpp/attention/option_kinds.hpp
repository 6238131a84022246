// The options a caller chooses by name (the mask, the positional encoding, the GELU form) and a
// mask's specification: shared by the ops that act on them and by the layer's and model's
// options, so that neither includes the other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "attention/name_table.hpp"

namespace attn {

enum class MaskKind {
  None,           // every key visible
  Causal,         // key j visible to query i iff j <= i (top-left aligned when n != kv_n)
  SlidingWindow,  // causal and local: j in (i - window, i] — the query and window-1 keys before it
  PrefixLM,       // keys j < prefix visible to every query; the rest causal
};

// The mask names in order ("none", "causal", "sliding-window", "prefix-lm"): the parser's table.
std::span<const NamedKind<MaskKind>> mask_kinds();
MaskKind parse_mask_kind(std::string_view name);  // throws naming every accepted name
const char* mask_kind_name(MaskKind kind);

struct MaskSpec {
  MaskKind kind = MaskKind::None;
  std::size_t window = 0;                 // SlidingWindow: visible keys per query, >= 1
  std::size_t prefix = 0;                 // PrefixLM: bidirectional prefix length
  std::vector<std::uint8_t> key_padding;  // [kv_n], 1 = padded key (hidden from every query)
  std::vector<std::uint8_t> cells;        // [n * kv_n], 1 = hidden cell; empty = none
};

// Which norm q and k get after their projection, before RoPE: none, each head's [head_dim] on its
// own (Qwen3, Gemma 3), or the whole projection's [heads·head_dim] before the head split (OLMo 2;
// k over [kv_heads·head_dim]). A model's q/k norm is its RMSNorm kind (model_config.hpp).
enum class QkNorm { None, PerHead, Whole };

// "none" | "per-head" | "whole"; anything else throws, listing them.
std::span<const NamedKind<QkNorm>> qk_norm_kinds();
QkNorm parse_qk_norm(std::string_view name);
const char* qk_norm_name(QkNorm kind);

enum class PositionalKind {
  None,        // self-attention is permutation-equivariant
  Sinusoidal,  // PE(pos, 2i) = sin(pos / 10000^{2i/d}), PE(pos, 2i+1) = cos(…), added to X
  Learned,     // a seeded random table PE[pos] ~ N(0, 0.5²), added to X
  Rope,        // q and k rotated pairwise by angle pos · 10000^{-2i/d_k} (needs even d_k)
  Alibi,       // scores_ij += -m_h · |i - j| with the ALiBi head slopes m_h
};

// The encoding names in order ("none", "sinusoidal", "learned", "rope", "alibi"): the parser's
// table.
std::span<const NamedKind<PositionalKind>> positional_kinds();
PositionalKind parse_positional_kind(std::string_view name);  // throws naming every accepted name
const char* positional_kind_name(PositionalKind kind);

enum class GeluKind { Erf, Tanh };

// "erf" | "tanh"; anything else throws, listing them.
std::span<const NamedKind<GeluKind>> gelu_kinds();
GeluKind parse_gelu_kind(std::string_view name);
const char* gelu_kind_name(GeluKind kind);

}  // namespace attn
