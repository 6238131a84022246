// Dequantization: the values of a GGUF tensor's stored blocks as float, for F32, F16, BF16, Q8_0,
// Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K (ggml-quants.c's dequantize_row_*). The scalar
// reference: the kernels that multiply quantized weights (a later step) must equal a float32
// product over these values.
//
// Every value is the exact x = d·q (Q8_0, Q4_0, Q5_0), d·q + m (Q4_1, Q5_1), d·scale·q − dmin·min
// (Q4_K, Q5_K) or d·scale·(q − 32) (Q6_K) rounded once to float: each product of a half with the
// small integers is exact in float, as ggml's own float code computes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "attention/ops/ggml_blocks.hpp"

namespace attn {

// Whether dequantize reads `type`.
bool can_dequantize(GgmlType type);
// "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K"
const char* dequantizable_type_names();

// out [count] = the `count` values stored in `bytes` as `type`: count a multiple of the type's
// block_values and bytes exactly count / block_values · block_bytes, else attn::Error (as for a
// type dequantize does not read, named with the ones it does).
void dequantize(GgmlType type, std::span<const std::uint8_t> bytes, std::span<float> out);

// One format each: `blocks` blocks from `in` (block_count · block_bytes bytes, any alignment) into
// out [blocks · block_values].
void dequantize_q8_0(const std::uint8_t* in, std::size_t blocks, float* out);
void dequantize_q4_0(const std::uint8_t* in, std::size_t blocks, float* out);
void dequantize_q4_1(const std::uint8_t* in, std::size_t blocks, float* out);
void dequantize_q5_0(const std::uint8_t* in, std::size_t blocks, float* out);
void dequantize_q5_1(const std::uint8_t* in, std::size_t blocks, float* out);
void dequantize_q4_k(const std::uint8_t* in, std::size_t blocks, float* out);
void dequantize_q5_k(const std::uint8_t* in, std::size_t blocks, float* out);
void dequantize_q6_k(const std::uint8_t* in, std::size_t blocks, float* out);

}  // namespace attn
