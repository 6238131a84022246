// Linear layer forward and backward on the packed SIMD matmul, see linear.hpp.
#include "attention/ops/linear.hpp"

#include <algorithm>

#include "attention/ops/quantized_linear.hpp"
#include "attention/ops/vec.hpp"

namespace attn {

void linear_forward(const float* x, const float* w, const float* b, float* y, std::size_t m,
                    std::size_t in, std::size_t out, LinearScratch& scratch) {
  linear_forward(x, StoredWeights(w), b, y, m, in, out, scratch);
}

void linear_forward(const float* x, const StoredWeights& w, const float* b, float* y, std::size_t m,
                    std::size_t in, std::size_t out, LinearScratch& scratch,
                    std::size_t pack_values) {
  if (w.quantized != nullptr) {  // dequantized as the kernels stream it, never packed as float
    quantized_linear_forward(x, *w.quantized, b, y, m);
    return;
  }
  // Output columns [first, first + count) at a time: Wᵀ's columns are W's rows. Each y value is
  // summed over k in the same order whatever the block (matmul_packed's contract).
  const std::size_t panel = kPanelWidth;
  const std::size_t block =
      std::max(panel, pack_values / std::max<std::size_t>(in, 1) / panel * panel);
  for (std::size_t first = 0; first < out; first += block) {
    const std::size_t count = std::min(block, out - first);
    const float* rows = w.values ? w.values + first * in : nullptr;
    if (!rows) {
      scratch.widened.resize(count * in);
      w.rows(first, count, in, scratch.widened.data());
      rows = scratch.widened.data();
    }
    pack_transposed(ConstMatView(rows, count, in), scratch.packed_weight);  // Wᵀ [in, count]
    matmul_packed(ConstMatView(x, m, in), scratch.packed_weight, 0, 0,
                  MatView(y + first, m, count, out), b ? b + first : nullptr);
  }
}

std::size_t PackedLinear::bytes_for(const StoredWeights& w, std::size_t in, std::size_t out) {
  if (w.quantized != nullptr) return 0;  // used where it is, already in the kernels' layout
  const std::size_t values = (out + kPanelWidth - 1) / kPanelWidth * kPanelWidth * in;
  return values * (w.half && w.kind == HalfKind::BF16 ? 2 : 4);
}

void PackedLinear::pack(const StoredWeights& w, std::size_t in, std::size_t out) {
  quantized_ = w.quantized;
  if (quantized_ != nullptr) {
    floats_ = PackedMatrix{};
    bf16_ = PackedBf16Matrix{};
    return;
  }
  // The buffer of the kind written is reused (a trained model packs again after every step); the
  // other kind's is freed.
  if (w.half && w.kind == HalfKind::BF16) {
    floats_ = PackedMatrix{};
    pack_transposed_bf16(w.half, out, in, bf16_);
    return;
  }
  bf16_ = PackedBf16Matrix{};
  const float* rows = w.values;
  AlignedVector<float> widened;
  if (!rows) {
    widened.resize(out * in);
    w.rows(0, out, in, widened.data());
    rows = widened.data();
  }
  pack_transposed(ConstMatView(rows, out, in), floats_);
}

void PackedLinear::clear() {
  quantized_ = nullptr;
  floats_ = PackedMatrix{};
  bf16_ = PackedBf16Matrix{};
}

void PackedLinear::forward(const float* x, const float* b, float* y, std::size_t m) const {
  if (quantized_ != nullptr) {
    quantized_linear_forward(x, *quantized_, b, y, m);
  } else if (!bf16_.data.empty()) {
    matmul_packed(ConstMatView(x, m, bf16_.rows), bf16_, MatView(y, m, bf16_.cols), b);
  } else {
    matmul_packed(ConstMatView(x, m, floats_.rows), floats_, MatView(y, m, floats_.cols), b);
  }
}

void linear_backward(const float* dy, const float* x, const float* w, float* dx, float* dw,
                     float* db, std::size_t m, std::size_t in, std::size_t out,
                     LinearScratch& scratch) {
  if (dx) {  // dX [m, in] += dY [m, out] · W [out, in]
    pack_matrix(ConstMatView(w, out, in), scratch.packed_weight);
    matmul_packed(ConstMatView(dy, m, out), scratch.packed_weight, 0, 0, MatView(dx, m, in),
                  nullptr, true);
  }
  // dW [out, in] += dYᵀ [out, m] · X [m, in]. The operand on the left must be transposed
  // (the kernel reads it by rows); transpose the narrower of dY and X: when in < out, compute
  // dWᵀ = Xᵀ · dY instead and add it back transposed ([out, in] is small next to [m, ·]).
  const std::size_t ld = vec::padded_stride(m);
  if (in < out) {
    scratch.transposed.resize(in * ld);
    vec::transpose(x, m, in, scratch.transposed.data(), ld);
    pack_matrix(ConstMatView(dy, m, out), scratch.packed_rows);
    scratch.product.resize(in * out);
    matmul_packed(ConstMatView(scratch.transposed.data(), in, m, ld), scratch.packed_rows,
                  MatView(scratch.product.data(), in, out));
    for (std::size_t o = 0; o < out; ++o) {
      for (std::size_t i = 0; i < in; ++i) dw[o * in + i] += scratch.product[i * out + o];
    }
  } else {
    scratch.transposed.resize(out * ld);
    vec::transpose(dy, m, out, scratch.transposed.data(), ld);
    pack_matrix(ConstMatView(x, m, in), scratch.packed_rows);
    matmul_packed(ConstMatView(scratch.transposed.data(), out, m, ld), scratch.packed_rows, 0, 0,
                  MatView(dw, out, in), nullptr, true);
  }
  if (db) {
    for (std::size_t r = 0; r < m; ++r) vec::add(dy + r * out, db, out);
  }
}

}  // namespace attn
