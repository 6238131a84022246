// Quantized weight matrices in the panel layout, see quantized_weights.hpp.
#include "attention/ops/quantized_weights.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/ops/dequantize.hpp"
#include "attention/ops/matmul.hpp"

namespace attn {

namespace {

constexpr std::size_t NR = kPanelWidth;
constexpr std::size_t L = NR / 2;  // lanes of a byte plane: row j and row j + L share a byte
static_assert(NR % 2 == 0);

// One block's contents, format-free: its halves, sub-block scales and mins, and each value's
// quant (Q8_0: the int8's byte; the others the unsigned 4-, 5- or 6-bit value).
struct BlockFields {
  std::uint8_t d[2] = {}, m[2] = {};
  std::uint8_t scales[16] = {}, mins[8] = {};
  std::uint8_t q[256] = {};
};

void copy_half(std::uint8_t* to, const std::uint8_t* from) {
  to[0] = from[0];
  to[1] = from[1];
}

// Q4_0 / Q4_1 / Q5_* nibbles: value j in the low nibble of qs[j], value j + 16 in the high one.
void nibbles_from(const std::uint8_t* qs, std::uint8_t* q) {
  for (std::size_t j = 0; j < 16; ++j) {
    q[j] = qs[j] & 0xF;
    q[j + 16] = qs[j] >> 4;
  }
}
void nibbles_to(const std::uint8_t* q, std::uint8_t* qs) {
  for (std::size_t j = 0; j < 16; ++j)
    qs[j] = std::uint8_t((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
}
// Q5_0 / Q5_1's fifth bits: value j's in bit j of qh (little-endian u32).
void fifth_bits_from(const std::uint8_t* qh, std::uint8_t* q) {
  for (std::size_t j = 0; j < 32; ++j) q[j] |= std::uint8_t(((qh[j / 8] >> (j % 8)) & 1) << 4);
}
void fifth_bits_to(const std::uint8_t* q, std::uint8_t* qh) {
  for (std::size_t i = 0; i < 4; ++i) qh[i] = 0;
  for (std::size_t j = 0; j < 32; ++j) qh[j / 8] |= std::uint8_t(((q[j] >> 4) & 1) << (j % 8));
}
// Q4_K / Q5_K's 12 packed bytes of six-bit scales and mins (ggml_blocks.hpp's k_scale_min) and
// back.
void k_scales_from(const std::uint8_t* packed, BlockFields& f) {
  for (std::size_t j = 0; j < 8; ++j) {
    const ScaleMin sm = k_scale_min(packed, j);
    f.scales[j] = sm.scale;
    f.mins[j] = sm.min;
  }
}
void k_scales_to(const BlockFields& f, std::uint8_t* packed) {
  for (std::size_t j = 0; j < 4; ++j) {
    packed[j] = std::uint8_t((f.scales[j] & 63) | ((f.scales[j + 4] >> 4) << 6));
    packed[j + 4] = std::uint8_t((f.mins[j] & 63) | ((f.mins[j + 4] >> 4) << 6));
    packed[j + 8] = std::uint8_t((f.scales[j + 4] & 0xF) | ((f.mins[j + 4] & 0xF) << 4));
  }
}
// Q4_K / Q5_K quants: each 64 values share 32 bytes of qs (low nibbles first); Q5_K's fifth bit of
// value 64·g + 32·h + l is bit 2·g + h of qh[l].
void k_nibbles_from(const std::uint8_t* qs, std::uint8_t* q) {
  for (std::size_t g = 0; g < 4; ++g) {
    for (std::size_t l = 0; l < 32; ++l) {
      q[64 * g + l] = qs[32 * g + l] & 0xF;
      q[64 * g + 32 + l] = qs[32 * g + l] >> 4;
    }
  }
}
void k_nibbles_to(const std::uint8_t* q, std::uint8_t* qs) {
  for (std::size_t g = 0; g < 4; ++g) {
    for (std::size_t l = 0; l < 32; ++l) {
      qs[32 * g + l] = std::uint8_t((q[64 * g + l] & 0xF) | ((q[64 * g + 32 + l] & 0xF) << 4));
    }
  }
}

BlockFields fields_of(GgmlType type, const std::uint8_t* in) {
  BlockFields f;
  switch (type) {
    case GgmlType::Q8_0: {
      BlockQ8_0 b;
      std::copy_n(in, sizeof b, reinterpret_cast<std::uint8_t*>(&b));
      copy_half(f.d, b.d);
      std::copy_n(b.qs, 32, f.q);
      break;
    }
    case GgmlType::Q4_0: {
      BlockQ4_0 b;
      std::copy_n(in, sizeof b, reinterpret_cast<std::uint8_t*>(&b));
      copy_half(f.d, b.d);
      nibbles_from(b.qs, f.q);
      break;
    }
    case GgmlType::Q4_1: {
      BlockQ4_1 b;
      std::copy_n(in, sizeof b, reinterpret_cast<std::uint8_t*>(&b));
      copy_half(f.d, b.d);
      copy_half(f.m, b.m);
      nibbles_from(b.qs, f.q);
      break;
    }
    case GgmlType::Q5_0: {
      BlockQ5_0 b;
      std::copy_n(in, sizeof b, reinterpret_cast<std::uint8_t*>(&b));
      copy_half(f.d, b.d);
      nibbles_from(b.qs, f.q);
      fifth_bits_from(b.qh, f.q);
      break;
    }
    case GgmlType::Q5_1: {
      BlockQ5_1 b;
      std::copy_n(in, sizeof b, reinterpret_cast<std::uint8_t*>(&b));
      copy_half(f.d, b.d);
      copy_half(f.m, b.m);
      nibbles_from(b.qs, f.q);
      fifth_bits_from(b.qh, f.q);
      break;
    }
    case GgmlType::Q4_K: {
      BlockQ4_K b;
      std::copy_n(in, sizeof b, reinterpret_cast<std::uint8_t*>(&b));
      copy_half(f.d, b.d);
      copy_half(f.m, b.dmin);
      k_scales_from(b.scales, f);
      k_nibbles_from(b.qs, f.q);
      break;
    }
    case GgmlType::Q5_K: {
      BlockQ5_K b;
      std::copy_n(in, sizeof b, reinterpret_cast<std::uint8_t*>(&b));
      copy_half(f.d, b.d);
      copy_half(f.m, b.dmin);
      k_scales_from(b.scales, f);
      k_nibbles_from(b.qs, f.q);
      for (std::size_t g = 0; g < 4; ++g) {
        for (std::size_t l = 0; l < 32; ++l) {
          f.q[64 * g + l] |= std::uint8_t(((b.qh[l] >> (2 * g)) & 1) << 4);
          f.q[64 * g + 32 + l] |= std::uint8_t(((b.qh[l] >> (2 * g + 1)) & 1) << 4);
        }
      }
      break;
    }
    case GgmlType::Q6_K: {
      BlockQ6_K b;
      std::copy_n(in, sizeof b, reinterpret_cast<std::uint8_t*>(&b));
      copy_half(f.d, b.d);
      std::copy_n(b.scales, 16, f.scales);
      // value 128·h + 32·k + l: low 4 bits from ql (dequantize_q6_k's order), high 2 from qh
      for (std::size_t h = 0; h < 2; ++h) {
        const std::uint8_t* ql = b.ql + 64 * h;
        const std::uint8_t* qh = b.qh + 32 * h;
        for (std::size_t l = 0; l < 32; ++l) {
          const int low[4] = {ql[l] & 0xF, ql[l + 32] & 0xF, ql[l] >> 4, ql[l + 32] >> 4};
          for (std::size_t k = 0; k < 4; ++k) {
            f.q[128 * h + 32 * k + l] = std::uint8_t(low[k] | (((qh[l] >> (2 * k)) & 3) << 4));
          }
        }
      }
      break;
    }
    default:
      break;
  }
  return f;
}

void write_fields(GgmlType type, const BlockFields& f, std::uint8_t* out) {
  const auto store = [&](const auto& block) {
    std::copy_n(reinterpret_cast<const std::uint8_t*>(&block), sizeof block, out);
  };
  switch (type) {
    case GgmlType::Q8_0: {
      BlockQ8_0 b;
      copy_half(b.d, f.d);
      std::copy_n(f.q, 32, b.qs);
      return store(b);
    }
    case GgmlType::Q4_0: {
      BlockQ4_0 b;
      copy_half(b.d, f.d);
      nibbles_to(f.q, b.qs);
      return store(b);
    }
    case GgmlType::Q4_1: {
      BlockQ4_1 b;
      copy_half(b.d, f.d);
      copy_half(b.m, f.m);
      nibbles_to(f.q, b.qs);
      return store(b);
    }
    case GgmlType::Q5_0: {
      BlockQ5_0 b;
      copy_half(b.d, f.d);
      nibbles_to(f.q, b.qs);
      fifth_bits_to(f.q, b.qh);
      return store(b);
    }
    case GgmlType::Q5_1: {
      BlockQ5_1 b;
      copy_half(b.d, f.d);
      copy_half(b.m, f.m);
      nibbles_to(f.q, b.qs);
      fifth_bits_to(f.q, b.qh);
      return store(b);
    }
    case GgmlType::Q4_K: {
      BlockQ4_K b;
      copy_half(b.d, f.d);
      copy_half(b.dmin, f.m);
      k_scales_to(f, b.scales);
      k_nibbles_to(f.q, b.qs);
      return store(b);
    }
    case GgmlType::Q5_K: {
      BlockQ5_K b;
      copy_half(b.d, f.d);
      copy_half(b.dmin, f.m);
      k_scales_to(f, b.scales);
      k_nibbles_to(f.q, b.qs);
      std::fill(b.qh, b.qh + 32, std::uint8_t{0});
      for (std::size_t g = 0; g < 4; ++g) {
        for (std::size_t l = 0; l < 32; ++l) {
          b.qh[l] |= std::uint8_t(((f.q[64 * g + l] >> 4) & 1) << (2 * g));
          b.qh[l] |= std::uint8_t(((f.q[64 * g + 32 + l] >> 4) & 1) << (2 * g + 1));
        }
      }
      return store(b);
    }
    case GgmlType::Q6_K: {
      BlockQ6_K b{};
      copy_half(b.d, f.d);
      std::copy_n(f.scales, 16, b.scales);
      for (std::size_t h = 0; h < 2; ++h) {
        std::uint8_t* ql = b.ql + 64 * h;
        std::uint8_t* qh = b.qh + 32 * h;
        for (std::size_t l = 0; l < 32; ++l) {
          const std::uint8_t* q = f.q + 128 * h + l;  // q[32·k]: value 128·h + 32·k + l
          ql[l] = std::uint8_t((q[0] & 0xF) | ((q[64] & 0xF) << 4));
          ql[l + 32] = std::uint8_t((q[32] & 0xF) | ((q[96] & 0xF) << 4));
          qh[l] = std::uint8_t((q[0] >> 4) | ((q[32] >> 4) << 2) | ((q[64] >> 4) << 4) |
                               ((q[96] >> 4) << 6));
        }
      }
      return store(b);
    }
    default:
      return;
  }
}

}  // namespace

bool can_keep_quantized(GgmlType type) {
  for (const GgmlType kept : kKeptQuantizedTypes) {
    if (kept == type) return true;
  }
  return false;
}

double quantized_bytes_per_value(GgmlType type) {
  const QuantizedLayout layout = quantized_layout(type);
  return double(layout.record_bytes(NR)) / double(NR * layout.block_values);
}

std::size_t QuantizedMatrix::bytes_for(GgmlType type, std::size_t rows, std::size_t cols) {
  const QuantizedLayout layout = quantized_layout(type);
  return (rows + NR - 1) / NR * (cols / layout.block_values) * layout.record_bytes(NR);
}

QuantizedMatrix::QuantizedMatrix(GgmlType type, std::size_t rows, std::size_t cols)
    : type_(type), rows_(rows), cols_(cols) {
  if (!can_keep_quantized(type)) {
    throw Error(std::string("a ") + ggml_type_name(type) +
                " matrix cannot be kept quantized (supported: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, "
                "Q4_K, Q5_K, Q6_K, F32, F16, BF16)");
  }
  const QuantizedLayout layout = quantized_layout(type);
  if (cols % layout.block_values != 0) {
    throw Error(std::string("a ") + ggml_type_name(type) + " matrix's rows of " +
                std::to_string(cols) + " values are not whole blocks of " +
                std::to_string(layout.block_values));
  }
  blocks_per_row_ = cols / layout.block_values;
  record_bytes_ = layout.record_bytes(NR);
  data_.assign(bytes_for(type, rows, cols), 0);
}

std::size_t QuantizedMatrix::panels() const {
  return (rows_ + NR - 1) / NR;
}

void QuantizedMatrix::set_block(std::size_t row, std::size_t block,
                                const std::uint8_t* file_block) {
  const QuantizedLayout layout = quantized_layout(type_);
  if (layout.plain_bytes) {  // the value's bytes in its row's place
    std::copy_n(file_block, layout.plain_bytes,
                record(row / NR, block) + layout.plain_bytes * (row % NR));
    return;
  }
  const BlockFields f = fields_of(type_, file_block);
  std::uint8_t* rec = record(row / NR, block);
  const std::size_t r = row % NR, lane = r % L;
  const unsigned upper = unsigned(r / L);  // 0: the low nibble (or bits) of the shared byte
  copy_half(rec + 2 * r, f.d);
  if (layout.has_m) copy_half(rec + layout.m_offset(NR) + 2 * r, f.m);
  for (std::size_t g = 0; g < layout.group_scales; ++g) {
    rec[layout.scales_offset(NR) + g * NR + r] = f.scales[g];
    if (layout.has_mins) rec[layout.mins_offset(NR) + g * NR + r] = f.mins[g];
  }
  std::uint8_t* quants = rec + layout.quants_offset(NR);
  std::uint8_t* high = rec + layout.high_offset(NR);
  const std::size_t bits = layout.high_bits, per_byte = bits ? 4 / bits : 1;
  const unsigned low_bits = unsigned(4 - bits);
  for (std::size_t v = 0; v < layout.block_values; ++v) {
    if (layout.eight_bit) {
      quants[v * NR + r] = f.q[v];
      continue;
    }
    // rows j + L: the whole value above the low rows' low bits; rows j: their low bits, the rest
    // in the high bits' plane
    std::uint8_t& quant_byte = quants[v * L + lane];
    const unsigned low_mask = (1u << low_bits) - 1;
    if (upper) {
      quant_byte = std::uint8_t((quant_byte & low_mask) | (f.q[v] << low_bits));
      continue;
    }
    quant_byte = std::uint8_t((quant_byte & ~low_mask) | (f.q[v] & low_mask));
    if (bits) {
      std::uint8_t& bits_byte = high[(v / per_byte) * L + lane];
      const unsigned at = unsigned(2 * bits * (v % per_byte));
      const unsigned mask = (1u << (2 * bits)) - 1;
      bits_byte = std::uint8_t((bits_byte & ~(mask << at)) | (((f.q[v] >> low_bits) & mask) << at));
    }
  }
}

void QuantizedMatrix::get_block(std::size_t row, std::size_t block,
                                std::uint8_t* file_block) const {
  const QuantizedLayout layout = quantized_layout(type_);
  if (layout.plain_bytes) {
    std::copy_n(record(row / NR, block) + layout.plain_bytes * (row % NR), layout.plain_bytes,
                file_block);
    return;
  }
  BlockFields f;
  const std::uint8_t* rec = record(row / NR, block);
  const std::size_t r = row % NR, lane = r % L;
  const unsigned upper = unsigned(r / L);
  copy_half(f.d, rec + 2 * r);
  if (layout.has_m) copy_half(f.m, rec + layout.m_offset(NR) + 2 * r);
  for (std::size_t g = 0; g < layout.group_scales; ++g) {
    f.scales[g] = rec[layout.scales_offset(NR) + g * NR + r];
    if (layout.has_mins) f.mins[g] = rec[layout.mins_offset(NR) + g * NR + r];
  }
  const std::uint8_t* quants = rec + layout.quants_offset(NR);
  const std::uint8_t* high = rec + layout.high_offset(NR);
  const std::size_t bits = layout.high_bits, per_byte = bits ? 4 / bits : 1;
  const unsigned low_bits = unsigned(4 - bits);
  for (std::size_t v = 0; v < layout.block_values; ++v) {
    if (layout.eight_bit) {
      f.q[v] = quants[v * NR + r];
      continue;
    }
    const std::uint8_t quant_byte = quants[v * L + lane];
    if (upper) {
      f.q[v] = std::uint8_t(quant_byte >> low_bits);
      continue;
    }
    f.q[v] = std::uint8_t(quant_byte & ((1u << low_bits) - 1));
    if (bits) {
      const unsigned at = unsigned(2 * bits * (v % per_byte));
      const unsigned byte = high[(v / per_byte) * L + lane];
      f.q[v] |= std::uint8_t(((byte >> at) & ((1u << (2 * bits)) - 1)) << low_bits);
    }
  }
  write_fields(type_, f, file_block);
}

void QuantizedMatrix::dequantize_rows(std::size_t first, std::size_t count, float* out) const {
  if (const std::size_t size = quantized_layout(type_).plain_bytes) {
    // a row's values gathered from its records into the file's bytes, then read by the reference
    std::vector<std::uint8_t> bytes(cols_ * size);
    for (std::size_t row = first; row < first + count; ++row, out += cols_) {
      for (std::size_t c = 0; c < cols_; ++c) {
        std::copy_n(record(row / NR, c) + size * (row % NR), size, bytes.data() + c * size);
      }
      dequantize(type_, bytes, std::span<float>(out, cols_));
    }
    return;
  }
  const GgmlTypeInfo& info = ggml_type_info(type_);
  std::uint8_t block[256];
  for (std::size_t row = first; row < first + count; ++row) {
    for (std::size_t b = 0; b < blocks_per_row_; ++b, out += info.block_values) {
      get_block(row, b, block);
      dequantize(type_, std::span<const std::uint8_t>(block, info.block_bytes),
                 std::span<float>(out, info.block_values));
    }
  }
}

std::size_t QuantizedWeights::bytes() const {
  std::size_t total = 0;
  for (const Part& part : parts) total += part.matrix.bytes();
  return total;
}

const QuantizedWeights::Part& QuantizedWeights::part_of(std::size_t row) const {
  for (const Part& part : parts) {
    if (row >= part.first_row && row < part.first_row + part.matrix.rows()) return part;
  }
  throw Error("row " + std::to_string(row) + " is outside the quantized matrix's " +
              std::to_string(rows) + " rows");
}

QuantizedWeights::Part& QuantizedWeights::part_of(std::size_t row) {
  return const_cast<Part&>(static_cast<const QuantizedWeights&>(*this).part_of(row));
}

void QuantizedWeights::dequantize_values(std::size_t begin, std::size_t end, float* out) const {
  std::vector<float> row(cols);
  while (begin < end) {
    const std::size_t r = begin / cols, c = begin % cols;
    const std::size_t take = std::min(cols - c, end - begin);
    const Part& part = part_of(r);
    if (c == 0 && take == cols) {
      part.matrix.dequantize_rows(r - part.first_row, 1, out);
    } else {
      part.matrix.dequantize_rows(r - part.first_row, 1, row.data());
      std::copy_n(row.data() + c, take, out);
    }
    out += take;
    begin += take;
  }
}

}  // namespace attn
