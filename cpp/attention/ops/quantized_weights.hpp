// A weight matrix kept in a GGUF file's quantized blocks (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K,
// Q6_K) or float values (F32, F16, BF16), its bytes rearranged — not widened — so the kernels
// (quantized_linear.hpp) read kPanelWidth output rows at once, one SIMD lane per row, as the float
// kernels read a packed panel; and a model's weight matrix made of several such row ranges, each of
// its own type (a fused q|k|v whose tensors were quantized differently).
//
// Layout: W [rows, cols] is cut into panels of NR = kPanelWidth rows (the last zero-padded) and
// each panel's row into the type's blocks (32 or 256 values). The NR blocks of one (panel, block
// column) are stored as one record, field by field, each field NR rows side by side:
//   d [NR] (the block's half scale), then m or dmin [NR] (Q4_1, Q5_1, Q4_K, Q5_K),
//   the K-quants' sub-block scales [groups][NR] bytes (Q4_K/Q5_K six-bit, unpacked; Q6_K int8)
//   and Q4_K/Q5_K's sub-block mins [groups][NR],
//   the quants: Q8_0 one int8 per value, [values][NR]; the others one byte per value for two rows,
//   [values][NR/2] bytes: byte j of a value holds row j + NR/2's whole value in its top 4 + b bits
//   and row j's low 4 − b bits below (b = the bits above 4: Q5_*: 1, Q6_K: 2, else 0: nibbles),
//   and row j's other 2·b bits in bytes [values / S][NR/2] (S = 4 / b values per byte): bits
//   2b·s … 2b·s + 2b − 1 of byte j hold value s's. (Row j + NR/2's value is then one shift of its
//   byte, and row j's one mask and one inserted field: the one-row kernel's fewest operations.)
// F32, F16 and BF16 (a GGUF file's float matrices) are blocks of one value: a record is its NR
// rows' values side by side, so a panel is [cols][NR] values, matmul's panel layout (F32: the same
// bytes; F16, BF16: 2 bytes a value).
// A record takes NR times the file's block bytes (Q4_K/Q5_K: 148 and 180 in place of 144 and 176,
// their scales unpacked), so a matrix takes its file's bytes (+ the last panel's padding).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attention/ops/ggml_blocks.hpp"
#include "attention/tensor.hpp"

namespace attn {

// The types a matrix can be kept quantized in (QuantizedMatrix's types).
inline constexpr GgmlType kKeptQuantizedTypes[] = {
    GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q4_K,
    GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::F32,  GgmlType::F16,  GgmlType::BF16};
bool can_keep_quantized(GgmlType type);
// The bytes one value of a matrix kept in `type` takes in memory (its layout's record over the
// values it holds: Q8_0 34 / 32, Q4_K 148 / 256 with its scales unpacked).
double quantized_bytes_per_value(GgmlType type);

// The per-type constants of the layout above.
struct QuantizedLayout {
  std::size_t block_values;     // 32 or 256
  std::size_t group_values;     // values sharing one scale (and offset): 32, or Q6_K's 16
  bool has_m;                   // a second half per block: m (Q4_1, Q5_1) or dmin (Q4_K, Q5_K)
  std::size_t group_scales;     // sub-block scale bytes per row: 8 (Q4_K, Q5_K), 16 (Q6_K), else 0
  bool has_mins;                // Q4_K, Q5_K: sub-block mins beside the scales
  bool eight_bit;               // Q8_0: whole int8 quants; else 4 low bits
  std::size_t high_bits;        // bits above the low 4: 1 (Q5_*), 2 (Q6_K), else 0
  std::size_t plain_bytes = 0;  // F32, F16, BF16: one value a block, of 4 or 2 bytes, no scale

  // Byte offsets of each field within a record of `nr` rows, and the record's size.
  constexpr std::size_t m_offset(std::size_t nr) const { return 2 * nr; }
  constexpr std::size_t scales_offset(std::size_t nr) const { return (has_m ? 4 : 2) * nr; }
  constexpr std::size_t mins_offset(std::size_t nr) const {
    return scales_offset(nr) + group_scales * nr;
  }
  constexpr std::size_t quants_offset(std::size_t nr) const {
    return mins_offset(nr) + (has_mins ? group_scales * nr : 0);
  }
  constexpr std::size_t high_offset(std::size_t nr) const {
    return quants_offset(nr) + block_values * (eight_bit ? nr : nr / 2);
  }
  constexpr std::size_t record_bytes(std::size_t nr) const {
    if (plain_bytes) return plain_bytes * nr * block_values;
    return high_offset(nr) + (high_bits ? block_values * high_bits / 4 * (nr / 2) : 0);
  }
};
//                          values group m      scales mins   8-bit  high bits
constexpr QuantizedLayout quantized_layout(GgmlType type) {
  switch (type) {
    case GgmlType::Q4_0:
      return {32, 32, false, 0, false, false, 0};
    case GgmlType::Q4_1:
      return {32, 32, true, 0, false, false, 0};
    case GgmlType::Q5_0:
      return {32, 32, false, 0, false, false, 1};
    case GgmlType::Q5_1:
      return {32, 32, true, 0, false, false, 1};
    case GgmlType::Q4_K:
      return {256, 32, true, 8, true, false, 0};
    case GgmlType::Q5_K:
      return {256, 32, true, 8, true, false, 1};
    case GgmlType::Q6_K:
      return {256, 16, false, 16, false, false, 2};
    case GgmlType::F32:
      return {1, 1, false, 0, false, false, 0, 4};
    case GgmlType::F16:
    case GgmlType::BF16:
      return {1, 1, false, 0, false, false, 0, 2};
    default:  // Q8_0
      return {32, 32, false, 0, false, true, 0};
  }
}

// W [rows, cols] of one quantized type, in the layout above.
class QuantizedMatrix {
 public:
  QuantizedMatrix() = default;
  // An all-zero matrix (every block d = 0: every value 0) to be filled by set_block. cols must be a
  // whole number of the type's blocks and the type one can_keep_quantized reads (attn::Error
  // otherwise, naming them).
  QuantizedMatrix(GgmlType type, std::size_t rows, std::size_t cols);
  // Bytes such a matrix takes.
  static std::size_t bytes_for(GgmlType type, std::size_t rows, std::size_t cols);

  GgmlType type() const { return type_; }
  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  std::size_t panels() const;
  std::size_t blocks_per_row() const { return blocks_per_row_; }
  std::size_t bytes() const { return data_.size(); }
  // Record of (panel, block column): record_bytes(kPanelWidth) bytes.
  const std::uint8_t* record(std::size_t panel, std::size_t block) const {
    return data_.data() + (panel * blocks_per_row_ + block) * record_bytes_;
  }

  // Stores block `block` of row `row` from its bytes as the GGUF file has them (any alignment).
  void set_block(std::size_t row, std::size_t block, const std::uint8_t* file_block);
  // The file's bytes of that block back (set_block's inverse).
  void get_block(std::size_t row, std::size_t block, std::uint8_t* file_block) const;
  // out [count, cols] = rows first … first + count − 1 dequantized (ops/dequantize's functions on
  // the blocks get_block gives back: the scalar reference).
  void dequantize_rows(std::size_t first, std::size_t count, float* out) const;

 private:
  std::uint8_t* record(std::size_t panel, std::size_t block) {
    return data_.data() + (panel * blocks_per_row_ + block) * record_bytes_;
  }

  GgmlType type_ = GgmlType::Q8_0;
  std::size_t rows_ = 0, cols_ = 0, blocks_per_row_ = 0, record_bytes_ = 0;
  AlignedVector<std::uint8_t> data_;
};

// A model's weight matrix W [rows, cols] kept quantized: row ranges one after another, each a
// QuantizedMatrix of its own type (a fused parameter's tensors, e.g. q Q4_K, k Q4_K, v Q6_K).
struct QuantizedWeights {
  struct Part {
    std::size_t first_row = 0;
    QuantizedMatrix matrix;
  };
  std::size_t rows = 0, cols = 0;
  std::vector<Part> parts;  // by first_row, covering [0, rows)

  std::size_t bytes() const;
  // The part holding row `row`.
  const Part& part_of(std::size_t row) const;
  Part& part_of(std::size_t row);
  // out = the values [begin, end) of W flattened row-major, dequantized.
  void dequantize_values(std::size_t begin, std::size_t end, float* out) const;
};

}  // namespace attn
