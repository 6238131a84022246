// The scalar dequantization of ggml's block formats, see dequantize.hpp.
#include "attention/ops/dequantize.hpp"

#include <cstring>
#include <string>

#include "attention/error.hpp"
#include "attention/message_text.hpp"
#include "attention/ops/half.hpp"

namespace attn {

namespace {

float half_at(const std::uint8_t* bytes) {
  return f16_to_f32(static_cast<std::uint16_t>(bytes[0] | (bytes[1] << 8)));
}

template <class Block>
Block block_at(const std::uint8_t* in, std::size_t index) {
  Block block;
  std::memcpy(&block, in + index * sizeof(Block), sizeof(Block));
  return block;
}

}  // namespace

void dequantize_q8_0(const std::uint8_t* in, std::size_t blocks, float* out) {
  for (std::size_t b = 0; b < blocks; ++b) {
    const auto block = block_at<BlockQ8_0>(in, b);
    const float d = half_at(block.d);
    for (std::size_t j = 0; j < kQK8_0; ++j) {
      *out++ = d * static_cast<float>(static_cast<std::int8_t>(block.qs[j]));
    }
  }
}

void dequantize_q4_0(const std::uint8_t* in, std::size_t blocks, float* out) {
  constexpr std::size_t kHalf = kQK4_0 / 2;
  for (std::size_t b = 0; b < blocks; ++b) {
    const auto block = block_at<BlockQ4_0>(in, b);
    const float d = half_at(block.d);
    for (std::size_t j = 0; j < kHalf; ++j) {
      out[j] = d * static_cast<float>((block.qs[j] & 0xF) - 8);
      out[j + kHalf] = d * static_cast<float>((block.qs[j] >> 4) - 8);
    }
    out += kQK4_0;
  }
}

void dequantize_q4_1(const std::uint8_t* in, std::size_t blocks, float* out) {
  constexpr std::size_t kHalf = kQK4_1 / 2;
  for (std::size_t b = 0; b < blocks; ++b) {
    const auto block = block_at<BlockQ4_1>(in, b);
    const float d = half_at(block.d), m = half_at(block.m);
    for (std::size_t j = 0; j < kHalf; ++j) {  // d · q is exact: one rounding, at the + m
      out[j] = d * static_cast<float>(block.qs[j] & 0xF) + m;
      out[j + kHalf] = d * static_cast<float>(block.qs[j] >> 4) + m;
    }
    out += kQK4_1;
  }
}

namespace {

// Q5_0 / Q5_1's five-bit values 0..31 of one block: low nibbles of qs, then the high ones; value
// j's fifth bit is bit j of qh (little-endian).
template <class Block>
void five_bit_values(const Block& block, int* q) {
  const std::uint32_t qh = std::uint32_t(block.qh[0]) | (std::uint32_t(block.qh[1]) << 8) |
                           (std::uint32_t(block.qh[2]) << 16) | (std::uint32_t(block.qh[3]) << 24);
  for (std::size_t j = 0; j < 16; ++j) {
    q[j] = (block.qs[j] & 0xF) | int(((qh >> j) & 1) << 4);
    q[j + 16] = (block.qs[j] >> 4) | int(((qh >> (j + 16)) & 1) << 4);
  }
}

}  // namespace

void dequantize_q5_0(const std::uint8_t* in, std::size_t blocks, float* out) {
  for (std::size_t b = 0; b < blocks; ++b) {
    const auto block = block_at<BlockQ5_0>(in, b);
    const float d = half_at(block.d);
    int q[kQK5_0];
    five_bit_values(block, q);
    for (std::size_t j = 0; j < kQK5_0; ++j) out[j] = d * static_cast<float>(q[j] - 16);
    out += kQK5_0;
  }
}

void dequantize_q5_1(const std::uint8_t* in, std::size_t blocks, float* out) {
  for (std::size_t b = 0; b < blocks; ++b) {
    const auto block = block_at<BlockQ5_1>(in, b);
    const float d = half_at(block.d), m = half_at(block.m);
    int q[kQK5_1];
    five_bit_values(block, q);
    for (std::size_t j = 0; j < kQK5_1; ++j) out[j] = d * static_cast<float>(q[j]) + m;
    out += kQK5_1;
  }
}

void dequantize_q4_k(const std::uint8_t* in, std::size_t blocks, float* out) {
  for (std::size_t b = 0; b < blocks; ++b) {
    const auto block = block_at<BlockQ4_K>(in, b);
    const float d = half_at(block.d), dmin = half_at(block.dmin);
    // Each 64 values: sub-block 2·g in the low nibbles of qs [32·g, 32·g + 32), 2·g + 1 the high.
    for (std::size_t group = 0; group < 4; ++group) {
      const std::uint8_t* q = block.qs + 32 * group;
      const ScaleMin low = k_scale_min(block.scales, 2 * group);
      const ScaleMin high = k_scale_min(block.scales, 2 * group + 1);
      const float d_low = d * low.scale, m_low = dmin * low.min;
      const float d_high = d * high.scale, m_high = dmin * high.min;
      for (std::size_t l = 0; l < 32; ++l) out[l] = d_low * static_cast<float>(q[l] & 0xF) - m_low;
      for (std::size_t l = 0; l < 32; ++l) {
        out[32 + l] = d_high * static_cast<float>(q[l] >> 4) - m_high;
      }
      out += 64;
    }
  }
}

void dequantize_q5_k(const std::uint8_t* in, std::size_t blocks, float* out) {
  for (std::size_t b = 0; b < blocks; ++b) {
    const auto block = block_at<BlockQ5_K>(in, b);
    const float d = half_at(block.d), dmin = half_at(block.dmin);
    for (std::size_t group = 0; group < 4; ++group) {
      const std::uint8_t* q = block.qs + 32 * group;
      const unsigned low_bit = 1u << (2 * group), high_bit = 1u << (2 * group + 1);
      const ScaleMin low = k_scale_min(block.scales, 2 * group);
      const ScaleMin high = k_scale_min(block.scales, 2 * group + 1);
      const float d_low = d * low.scale, m_low = dmin * low.min;
      const float d_high = d * high.scale, m_high = dmin * high.min;
      for (std::size_t l = 0; l < 32; ++l) {
        const int value = (q[l] & 0xF) + ((block.qh[l] & low_bit) ? 16 : 0);
        out[l] = d_low * static_cast<float>(value) - m_low;
      }
      for (std::size_t l = 0; l < 32; ++l) {
        const int value = (q[l] >> 4) + ((block.qh[l] & high_bit) ? 16 : 0);
        out[32 + l] = d_high * static_cast<float>(value) - m_high;
      }
      out += 64;
    }
  }
}

void dequantize_q6_k(const std::uint8_t* in, std::size_t blocks, float* out) {
  for (std::size_t b = 0; b < blocks; ++b) {
    const auto block = block_at<BlockQ6_K>(in, b);
    const float d = half_at(block.d);
    // Each 128 values: ql [64·h, 64·h + 64) and qh [32·h, 32·h + 32); value l + 32·k (k = 0..3)
    // takes its low 4 bits from ql[l] (k = 0: low, 2: high nibble) or ql[l + 32] (k = 1, 3), its
    // high 2 bits from bits 2·k of qh[l], its scale from sub-block 8·h + 2·k + l / 16.
    for (std::size_t half = 0; half < 2; ++half) {
      const std::uint8_t* ql = block.ql + 64 * half;
      const std::uint8_t* qh = block.qh + 32 * half;
      const std::uint8_t* scales = block.scales + 8 * half;
      for (std::size_t l = 0; l < 32; ++l) {
        const int low[4] = {ql[l] & 0xF, ql[l + 32] & 0xF, ql[l] >> 4, ql[l + 32] >> 4};
        for (std::size_t k = 0; k < 4; ++k) {
          const int q = (low[k] | (((qh[l] >> (2 * k)) & 3) << 4)) - 32;
          const auto scale = static_cast<std::int8_t>(scales[2 * k + l / 16]);
          out[32 * k + l] = d * static_cast<float>(scale) * static_cast<float>(q);
        }
      }
      out += 128;
    }
  }
}

bool can_dequantize(GgmlType type) {
  switch (type) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
    case GgmlType::Q8_0:
    case GgmlType::Q4_0:
    case GgmlType::Q4_1:
    case GgmlType::Q5_0:
    case GgmlType::Q5_1:
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
    case GgmlType::Q6_K:
      return true;
    default:
      return false;
  }
}

const char* dequantizable_type_names() {
  return "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K";
}

void dequantize(GgmlType type, std::span<const std::uint8_t> bytes, std::span<float> out) {
  const GgmlTypeInfo& info = ggml_type_info(type);
  if (!can_dequantize(type)) {
    throw Error(std::string("dequantize: ") + info.name +
                " values cannot be read (supported: " + dequantizable_type_names() + ")");
  }
  const std::size_t count = out.size();
  if (count % info.block_values != 0) {
    throw Error("dequantize: " + count_text(count, std::string(info.name) + " value") +
                " is not a whole number of blocks of " + std::to_string(info.block_values));
  }
  const std::size_t blocks = count / info.block_values;
  if (bytes.size() != blocks * info.block_bytes) {
    throw Error("dequantize: " + count_text(count, std::string(info.name) + " value") + " take " +
                count_text(blocks * info.block_bytes, "byte") + ", given " +
                count_text(bytes.size(), "byte"));
  }
  const std::uint8_t* in = bytes.data();
  float* values = out.data();
  switch (type) {
    case GgmlType::F32:
      if (count > 0) std::memcpy(values, in, count * sizeof(float));
      return;
    case GgmlType::F16:
    case GgmlType::BF16: {
      const HalfKind kind = type == GgmlType::F16 ? HalfKind::F16 : HalfKind::BF16;
      for (std::size_t i = 0; i < count; ++i) {
        values[i] = half_to_f32(static_cast<std::uint16_t>(in[2 * i] | (in[2 * i + 1] << 8)), kind);
      }
      return;
    }
    case GgmlType::Q8_0:
      return dequantize_q8_0(in, blocks, values);
    case GgmlType::Q4_0:
      return dequantize_q4_0(in, blocks, values);
    case GgmlType::Q4_1:
      return dequantize_q4_1(in, blocks, values);
    case GgmlType::Q5_0:
      return dequantize_q5_0(in, blocks, values);
    case GgmlType::Q5_1:
      return dequantize_q5_1(in, blocks, values);
    case GgmlType::Q4_K:
      return dequantize_q4_k(in, blocks, values);
    case GgmlType::Q5_K:
      return dequantize_q5_k(in, blocks, values);
    case GgmlType::Q6_K:
      return dequantize_q6_k(in, blocks, values);
    default:
      return;  // refused above
  }
}

}  // namespace attn
