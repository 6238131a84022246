// ggml's tensor types as GGUF files store them: each type's id, name, values per block and bytes
// per block, and the block layouts of the formats `dequantize` reads (after ggml-common.h).
//
// A row of ne[0] values of a block type is ne[0] / block_values blocks laid end to end; every
// multi-byte field is little-endian, and the structs below hold only bytes (alignment 1), so a
// block is read from a file's bytes with one memcpy at any address.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn {

// ggml_type ids (ggml.h). Ids 4, 5, 31–33 and 36–38 were retired upstream and are unknown here,
// as are ids newer than MXFP4.
enum class GgmlType : std::uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
};

// One row of the type table: a block of `block_values` values takes `block_bytes` bytes (a plain
// type is a block of one value).
struct GgmlTypeInfo {
  GgmlType type;
  const char* name;  // as ggml names it: "Q4_K", "BF16"
  std::uint32_t block_values;
  std::uint32_t block_bytes;
};

// The row of a type id read from a file, nullptr when the id is unknown.
const GgmlTypeInfo* find_ggml_type(std::uint32_t id);
// The row of a known type.
const GgmlTypeInfo& ggml_type_info(GgmlType type);
inline const char* ggml_type_name(GgmlType type) {
  return ggml_type_info(type).name;
}
// "F32, F16, Q4_0, …": every known type's name, for messages.
const char* known_ggml_type_names();

// ---- block layouts (the formats dequantize reads) ------------------------------------------
// d, dmin: IEEE half; a K-quant super-block holds 256 values in sub-blocks.

constexpr std::size_t kQK8_0 = 32;  // Q8_0: x = d · q, q a signed byte
struct BlockQ8_0 {
  std::uint8_t d[2];
  std::uint8_t qs[kQK8_0];  // int8
};
static_assert(sizeof(BlockQ8_0) == 34);

constexpr std::size_t kQK4_0 = 32;  // Q4_0: x = d · (q − 8); byte j holds values j (low) and j + 16
struct BlockQ4_0 {
  std::uint8_t d[2];
  std::uint8_t qs[kQK4_0 / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);

constexpr std::size_t kQK4_1 = 32;  // Q4_1: x = d · q + m; qs as Q4_0's
struct BlockQ4_1 {
  std::uint8_t d[2];
  std::uint8_t m[2];
  std::uint8_t qs[kQK4_1 / 2];
};
static_assert(sizeof(BlockQ4_1) == 20);

// Q5_0: x = d · (q − 16), q 5 bits: the low 4 as Q4_0's nibbles, the fifth of value j in bit j of
// qh (read as a little-endian u32).
constexpr std::size_t kQK5_0 = 32;
struct BlockQ5_0 {
  std::uint8_t d[2];
  std::uint8_t qh[4];
  std::uint8_t qs[kQK5_0 / 2];
};
static_assert(sizeof(BlockQ5_0) == 22);

constexpr std::size_t kQK5_1 = 32;  // Q5_1: x = d · q + m; q as Q5_0's
struct BlockQ5_1 {
  std::uint8_t d[2];
  std::uint8_t m[2];
  std::uint8_t qh[4];
  std::uint8_t qs[kQK5_1 / 2];
};
static_assert(sizeof(BlockQ5_1) == 24);

constexpr std::size_t kQK_K = 256;        // K-quants' super-block
constexpr std::size_t kKScaleBytes = 12;  // Q4_K / Q5_K: 8 six-bit scales and 8 six-bit mins

// Q4_K: 8 sub-blocks of 32; x = d · scale_j · q − dmin · min_j, q 4 bits. Each 64 values share 32
// bytes of qs: the first 32 values in the low nibbles, the next 32 in the high ones.
struct BlockQ4_K {
  std::uint8_t d[2];
  std::uint8_t dmin[2];
  std::uint8_t scales[kKScaleBytes];
  std::uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ4_K) == 144);

// Q5_K: Q4_K's layout plus a fifth bit per value: qh bit (2·(j/64)) for the low-nibble half of
// each 64, bit (2·(j/64) + 1) for the high-nibble half, byte j % 32.
struct BlockQ5_K {
  std::uint8_t d[2];
  std::uint8_t dmin[2];
  std::uint8_t scales[kKScaleBytes];
  std::uint8_t qh[kQK_K / 8];
  std::uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ5_K) == 176);

// Q6_K: 16 sub-blocks of 16; x = d · scale_j · (q − 32), q 6 bits (4 in ql, 2 in qh), scale_j a
// signed byte; d comes last.
struct BlockQ6_K {
  std::uint8_t ql[kQK_K / 2];
  std::uint8_t qh[kQK_K / 4];
  std::uint8_t scales[kQK_K / 16];  // int8
  std::uint8_t d[2];
};
static_assert(sizeof(BlockQ6_K) == 210);

// Sub-block j's (0–7) six-bit scale and min from a Q4_K / Q5_K block's 12 packed bytes: j < 4 in
// the low 6 bits of bytes j and j + 4; j ≥ 4 their low 4 bits in byte j + 4 (scale low nibble, min
// high nibble) and their high 2 bits in the top bits of bytes j − 4 (scale) and j (min).
struct ScaleMin {
  std::uint8_t scale;
  std::uint8_t min;
};
constexpr ScaleMin k_scale_min(const std::uint8_t* packed, std::size_t j) {
  if (j < 4) {
    return {static_cast<std::uint8_t>(packed[j] & 63),
            static_cast<std::uint8_t>(packed[j + 4] & 63)};
  }
  return {static_cast<std::uint8_t>((packed[j + 4] & 0xF) | ((packed[j - 4] >> 6) << 4)),
          static_cast<std::uint8_t>((packed[j + 4] >> 4) | ((packed[j] >> 6) << 4))};
}

}  // namespace attn
