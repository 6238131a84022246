// The option kinds' name tables (option_kinds.hpp).
#include "attention/option_kinds.hpp"

namespace attn {

std::span<const NamedKind<MaskKind>> mask_kinds() {
  static constexpr NamedKind<MaskKind> table[] = {{"none", MaskKind::None},
                                                  {"causal", MaskKind::Causal},
                                                  {"sliding-window", MaskKind::SlidingWindow},
                                                  {"prefix-lm", MaskKind::PrefixLM}};
  return table;
}

MaskKind parse_mask_kind(std::string_view name) {
  return parse_named(mask_kinds(), name, "mask");
}

const char* mask_kind_name(MaskKind kind) {
  return name_of(mask_kinds(), kind);
}

std::span<const NamedKind<PositionalKind>> positional_kinds() {
  static constexpr NamedKind<PositionalKind> table[] = {{"none", PositionalKind::None},
                                                        {"sinusoidal", PositionalKind::Sinusoidal},
                                                        {"learned", PositionalKind::Learned},
                                                        {"rope", PositionalKind::Rope},
                                                        {"alibi", PositionalKind::Alibi}};
  return table;
}

PositionalKind parse_positional_kind(std::string_view name) {
  return parse_named(positional_kinds(), name, "positional encoding");
}

const char* positional_kind_name(PositionalKind kind) {
  return name_of(positional_kinds(), kind);
}

std::span<const NamedKind<QkNorm>> qk_norm_kinds() {
  static constexpr NamedKind<QkNorm> table[] = {
      {"none", QkNorm::None}, {"per-head", QkNorm::PerHead}, {"whole", QkNorm::Whole}};
  return table;
}

QkNorm parse_qk_norm(std::string_view name) {
  return parse_named(qk_norm_kinds(), name, "q/k norm");
}

const char* qk_norm_name(QkNorm kind) {
  return name_of(qk_norm_kinds(), kind);
}

std::span<const NamedKind<GeluKind>> gelu_kinds() {
  static constexpr NamedKind<GeluKind> table[] = {{"erf", GeluKind::Erf}, {"tanh", GeluKind::Tanh}};
  return table;
}

GeluKind parse_gelu_kind(std::string_view name) {
  return parse_named(gelu_kinds(), name, "gelu");
}

const char* gelu_kind_name(GeluKind kind) {
  return name_of(gelu_kinds(), kind);
}

}  // namespace attn
