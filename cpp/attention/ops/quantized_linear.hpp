// A linear layer's product over weights kept quantized (quantized_weights.hpp): y = x·Wᵀ + b with
// W's blocks dequantized in registers as they stream, never stored as float whole.
//
// One row (a generation step): each panel of kPanelWidth output rows is streamed once over all of
// k. A group of values sharing a scale s and an offset o (value = s·q + o) adds
// s · Σ x_k q_k + o · Σ x_k: its quants, exact small integers in SIMD registers (one lane per
// output row), are multiply-added with x, then scaled once; the groups' sums of x are computed once
// per call. More rows (a prompt): each panel's slice of k is widened once into a float panel (in
// L1/L2), then matmul's register-tiled kernel runs down the rows over it, as the BF16 path does.
// Both split the panels over the thread pool, each output computed by one thread in one order, so
// the thread count never changes a bit.
//
// Every weight the prompt kernel widens is the value ops/dequantize gives (d·q, d·q + m,
// d·scale·q − dmin·min, …: one rounding of an exact value, the same in the kernel), and each output
// is summed in order over k as matmul_packed sums it, so a prompt's product equals, bit for bit,
// the float product over the dequantized weights (linear_forward on them). The one-row kernel's
// differs from it by float32 rounding only (the tests hold it to float32's summation bound of a
// float64 product): a group's scale applied after its sum instead of to each weight — what makes a
// generation step about 1.2–1.4× faster in wasm. (A zero weight's sign may differ: d·q with q = 8
// gives −0 for a negative d in ggml's Q4_0, +0 here; no sum tells them apart unless every other
// term and the bias are −0 too.)
#pragma once

#include <cstddef>

#include "attention/ops/linear.hpp"
#include "attention/ops/quantized_weights.hpp"

namespace attn {

namespace reference {

// y [m, rows] = x [m, cols] · Wᵀ + b (b [rows] or nullptr): W dequantized by the scalar reference
// (QuantizedMatrix::dequantize_rows, i.e. ops/dequantize's functions), the sums in double.
void quantized_linear_forward(const float* x, const QuantizedMatrix& w, const float* b, float* y,
                              std::size_t m);

}  // namespace reference

// y [m, rows] (row stride ldy) = x [m, cols] · Wᵀ + b (b [rows] or nullptr).
void quantized_linear_forward(const float* x, const QuantizedMatrix& w, const float* b, float* y,
                              std::size_t m, std::size_t ldy);
// The same over every part of a model's weight matrix: y [m, w.rows].
void quantized_linear_forward(const float* x, const QuantizedWeights& w, const float* b, float* y,
                              std::size_t m);

// out [kc, kPanelWidth] = panel `panel` of W's values k_first … k_first + kc − 1 (whole blocks),
// dequantized: the float panel the prompt kernel multiplies by (rows past W's zero).
void widen_quantized_panel(const QuantizedMatrix& w, std::size_t panel, std::size_t k_first,
                           std::size_t kc, float* out);

}  // namespace attn
