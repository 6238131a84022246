// A linear layer Y = X·Wᵀ + b (torch.nn.Linear's layout, W [out, in]): forward and backward,
// the backward's three products (dX = dY·W, dW += dYᵀ·X, db += Σ_rows dY) on the SIMD matmul.
#pragma once

#include <cstddef>

#include "attention/ops/half.hpp"
#include "attention/ops/matmul.hpp"
#include "attention/tensor.hpp"

namespace attn {

namespace reference {

// y [m, out] = x [m, in] · wᵀ + b;  w [out, in], b [out] or nullptr. Sums in double.
template <class T>
void linear_forward(const T* x, const T* w, const T* b, T* y, std::size_t m, std::size_t in,
                    std::size_t out) {
  for (std::size_t r = 0; r < m; ++r) {
    for (std::size_t o = 0; o < out; ++o) {
      double sum = b ? double(b[o]) : 0.0;
      for (std::size_t i = 0; i < in; ++i) sum += double(x[r * in + i]) * double(w[o * in + i]);
      y[r * out + o] = T(sum);
    }
  }
}

// Accumulates dx [m, in] += dy·w (dx may be nullptr), dw [out, in] += dyᵀ·x,
// db [out] += Σ_r dy[r] (db may be nullptr).  dy [m, out], x [m, in].
template <class T>
void linear_backward(const T* dy, const T* x, const T* w, T* dx, T* dw, T* db, std::size_t m,
                     std::size_t in, std::size_t out) {
  for (std::size_t r = 0; dx && r < m; ++r) {
    for (std::size_t i = 0; i < in; ++i) {
      double sum = 0.0;
      for (std::size_t o = 0; o < out; ++o) sum += double(dy[r * out + o]) * double(w[o * in + i]);
      dx[r * in + i] += T(sum);
    }
  }
  for (std::size_t o = 0; o < out; ++o) {
    for (std::size_t i = 0; i < in; ++i) {
      double sum = 0.0;
      for (std::size_t r = 0; r < m; ++r) sum += double(dy[r * out + o]) * double(x[r * in + i]);
      dw[o * in + i] += T(sum);
    }
    if (db) {
      double sum = 0.0;
      for (std::size_t r = 0; r < m; ++r) sum += double(dy[r * out + o]);
      db[o] += T(sum);
    }
  }
}

}  // namespace reference

// Reusable buffers for the SIMD versions (one per caller; no global state).
struct LinearScratch {
  PackedMatrix packed_weight;       // Wᵀ (forward) or W (backward)
  PackedMatrix packed_rows;         // X or dY [m, ·] (backward), kept apart so neither shrinks
  AlignedVector<float> transposed;  // dYᵀ [out, m] or Xᵀ [in, m], rows padded
  AlignedVector<float> product;     // dWᵀ [in, out] (when in < out)
  AlignedVector<float> widened;     // rows of a 2-byte W as float [chunk, in]
};

// Wᵀ is packed this many values at a time at most (a block of output columns; at least one panel),
// so a vocabulary-sized W (the unembedding) never needs a packed copy of itself.
inline constexpr std::size_t kLinearPackValues = std::size_t{1} << 20;
// For one row (a generation step): a block of Wᵀ small enough to stay in the L2 cache between its
// packing and its one use, so each weight crosses from memory once.
inline constexpr std::size_t kLinearRowPackValues = std::size_t{1} << 14;

// The same contracts in float: the forward packs Wᵀ once and runs matmul_packed with the bias;
// the backward packs W for dX, and for dW transposes the narrower of dY and X, all
// accumulating.
void linear_forward(const float* x, const float* w, const float* b, float* y, std::size_t m,
                    std::size_t in, std::size_t out, LinearScratch& scratch);
// The same for W as a model stores it (float, or 2-byte values widened as they are packed):
// bit-identical to the float version on the widened values. pack_values bounds the block of Wᵀ
// packed at a time (at least one panel); every block size gives the same values.
void linear_forward(const float* x, const StoredWeights& w, const float* b, float* y, std::size_t m,
                    std::size_t in, std::size_t out, LinearScratch& scratch,
                    std::size_t pack_values = kLinearPackValues);
void linear_backward(const float* dy, const float* x, const float* w, float* dx, float* dw,
                     float* db, std::size_t m, std::size_t in, std::size_t out,
                     LinearScratch& scratch);

// A weight W [out, in] packed once, as Wᵀ, for inference: a model whose weights do not change
// between forwards keeps it and skips linear_forward's packing on every call (a generation step
// would otherwise pack every weight of the model for one row). BF16 weights stay 2-byte (the
// kernel widens them as it loads them), float and F16 ones are packed as float; quantized ones are
// used where the model keeps them (already in their kernels' layout: no copy, 0 bytes).
class PackedLinear {
 public:
  // Bytes a packed W [out, in] stored as `w` takes.
  static std::size_t bytes_for(const StoredWeights& w, std::size_t in, std::size_t out);
  void pack(const StoredWeights& w, std::size_t in, std::size_t out);
  void clear();
  bool empty() const { return floats_.data.empty() && bf16_.data.empty() && quantized_ == nullptr; }
  // y [m, out] = x [m, in] · Wᵀ + b: bit-identical to linear_forward on the stored W.
  void forward(const float* x, const float* b, float* y, std::size_t m) const;

 private:
  PackedMatrix floats_;
  PackedBf16Matrix bf16_;
  const QuantizedWeights* quantized_ = nullptr;  // the model's, borrowed
};

}  // namespace attn
