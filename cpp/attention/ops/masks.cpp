// Mask kinds, validation, the visibility grid and -inf masking (see masks.hpp).
#include "attention/ops/masks.hpp"

#include <limits>
#include <string>

#include "attention/error.hpp"

namespace attn {

void validate_mask(const MaskSpec& spec, std::size_t n, std::size_t kv_n) {
  if (!spec.key_padding.empty() && spec.key_padding.size() != kv_n) {
    throw Error("keyPadding has " + std::to_string(spec.key_padding.size()) +
                " entries, expected one per key: " + std::to_string(kv_n));
  }
  const std::uint64_t cells = std::uint64_t{n} * kv_n;  // 64 bits: size_t is 32 in wasm
  if (!spec.cells.empty() && spec.cells.size() != cells) {
    throw Error("cell mask has " + std::to_string(spec.cells.size()) +
                " entries, expected n * kvN = " + std::to_string(n) + " * " + std::to_string(kv_n) +
                " = " + std::to_string(cells));
  }
  if (spec.kind == MaskKind::SlidingWindow && spec.window == 0) {
    throw Error(
        "mask 'sliding-window' needs window >= 1 (keys visible to each query, itself included)");
  }
}

bool masks_anything(const MaskSpec& spec) {
  auto any_set = [](const std::vector<std::uint8_t>& flags) {
    for (auto flag : flags) {
      if (flag) return true;
    }
    return false;
  };
  return spec.kind != MaskKind::None || any_set(spec.key_padding) || any_set(spec.cells);
}

void build_visibility(const MaskSpec& spec, std::size_t n, std::size_t kv_n,
                      std::vector<std::uint8_t>& visible) {
  validate_mask(spec, n, kv_n);
  visible.resize(n * kv_n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < kv_n; ++j) visible[i * kv_n + j] = is_visible(spec, i, j, kv_n);
  }
}

void apply_mask(MatView scores, const std::uint8_t* visible) {
  const float hidden = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < scores.rows; ++i) {
    float* row = scores.row(i);
    const std::uint8_t* vis = visible + i * scores.cols;
    for (std::size_t j = 0; j < scores.cols; ++j) row[j] = vis[j] ? row[j] : hidden;
  }
}

}  // namespace attn
