// Matrix products for the projections (X·Wᵀ), the scores (Q·Kᵀ) and the weighted sum (A·V).
#pragma once

#include <cstddef>
#include <cstdint>

#include "attention/ops/simd.hpp"
#include "attention/tensor.hpp"

namespace attn {

// The register tile of the microkernel: kTileRows rows of C by kPanelWidth columns (two SIMD
// vectors): 4 × 8 on wasm simd128 (8 accumulators, which V8 keeps in its 16 registers), 6 × 16
// on AVX2 (16 registers), 8 × 32 on AVX-512 (32 registers: 16 accumulators hide the FMA latency).
inline constexpr std::size_t kTileRows = simd::kWidth >= 16 ? 8 : simd::kWidth == 8 ? 6 : 4;
inline constexpr std::size_t kPanelWidth = ATTN_SIMD ? 2 * simd::kWidth : 4;

// B [k, n] packed for the microkernel: ceil(n / kPanelWidth) column panels, panel p holding
// columns [p·W, p·W + W) (W = kPanelWidth) of every row, row after row — [k, W] contiguous,
// zero-padded past column n. A kernel reads one panel front to back with aligned loads.
struct PackedMatrix {
  std::size_t rows = 0;  // k
  std::size_t cols = 0;  // n
  AlignedVector<float> data;

  std::size_t panels() const { return (cols + kPanelWidth - 1) / kPanelWidth; }
  // Start of row `row` of panel `panel`: kPanelWidth floats, columns panel·W … panel·W + W - 1.
  const float* panel(std::size_t panel, std::size_t row = 0) const {
    return data.data() + (panel * rows + row) * kPanelWidth;
  }
};

// The same layout in BF16, 2 bytes a value, for a checkpoint's BF16 weights packed once: the
// kernel widens each panel row as it loads it (exact: a BF16 value is a float's top 16 bits), so
// a product over it equals, bit for bit, the product over the widened float panels. With SIMD, a
// panel row's two vectors are interleaved, columns i and i + kWidth sharing one 32-bit lane (low
// and high half), so a load and two bit operations give both float vectors.
struct PackedBf16Matrix {
  std::size_t rows = 0;  // k
  std::size_t cols = 0;  // n
  AlignedVector<std::uint16_t> data;

  std::size_t panels() const { return (cols + kPanelWidth - 1) / kPanelWidth; }
  const std::uint16_t* panel(std::size_t panel, std::size_t row = 0) const {
    return data.data() + (panel * rows + row) * kPanelWidth;
  }
};

// Cache blocking of matmul_packed: a [kMatmulDepthBlock, kPanelWidth] slice of one panel stays in
// cache while the kernel walks down the rows (see matmul.cpp); the scalar build sums all of k at
// once. A multiple of 256 (a K-quant block), so a quantized panel's slices are whole blocks.
inline constexpr std::size_t kMatmulDepthBlock = ATTN_SIMD ? 4096 : std::size_t(-1);

// A [m, k] (any stride) as matmul_packed's kernels read it: row tiles of kTileRows rows (the last
// one the rows left), each packed [k, rows], the tile starting at row i at packed[i·k].
void pack_row_tiles(ConstMatView a, AlignedVector<float>& packed);
// C [rows, cols] (+)= A[:, k_first : k_first + kc] · P for one float panel slice P [kc,
// kPanelWidth] (cols <= kPanelWidth valid columns), A as pack_row_tiles packed it (depth: A's k);
// bias [cols] or nullptr (ignored with accumulate). Each value summed in order over k, as
// matmul_packed sums it (the panel kernels of weights widened slice by slice, quantized_linear.hpp,
// use it).
void multiply_panel(const float* row_tiles, std::size_t rows, std::size_t depth,
                    std::size_t k_first, std::size_t kc, const float* panel, float* c,
                    std::size_t ldc, std::size_t cols, const float* bias, bool accumulate);

// packed <- B [k, n] (any stride). Reuses packed's allocation when large enough.
void pack_matrix(ConstMatView b, PackedMatrix& packed);
// packed <- Bᵀ, given B [n, k] (any stride): the layout Q·Kᵀ multiplies by, packed straight
// from the rows of K.
void pack_transposed(ConstMatView b, PackedMatrix& packed);

// packed <- Bᵀ in BF16, given B [n, k] as BF16 values, row-major (a weight matrix W [out, in]).
void pack_transposed_bf16(const std::uint16_t* b, std::size_t n, std::size_t k,
                          PackedBf16Matrix& packed);

// C (+)= A · B[k_first : k_first + A.cols, col_first : col_first + C.cols] (+ bias).
// A [m, k'] any stride, C [m, n'] any stride, bias [n'] (for columns col_first …) or nullptr;
// col_first must be a multiple of kPanelWidth. With accumulate, C's values are added to
// (bias is then ignored). A is packed into tiles of kTileRows rows first (a per-thread
// scratch buffer); then cache-blocked (k in blocks, rows in blocks) over a kTileRows ×
// kPanelWidth register tile, or, for one row, several panels streamed at once; each C value is
// summed in order over k, so a column range or k range of a larger product, or one row of it,
// gives bit-identical values.
void matmul_packed(ConstMatView a, const PackedMatrix& b, std::size_t k_first,
                   std::size_t col_first, MatView c, const float* bias = nullptr,
                   bool accumulate = false);
// C = A·B (+ bias) over all of a BF16-packed B, each value as the float version sums it.
void matmul_packed(ConstMatView a, const PackedBf16Matrix& b, MatView c,
                   const float* bias = nullptr);
// C = A·B (+ bias) over all of B.
inline void matmul_packed(ConstMatView a, const PackedMatrix& b, MatView c,
                          const float* bias = nullptr) {
  matmul_packed(a, b, 0, 0, c, bias, false);
}

// C = A·B (+ bias on every row).  A [m, k], B [k, n], C [m, n], bias [n] or nullptr.
// Any strides; C must not overlap A or B. Packs B (into `packed`, reusable scratch) and runs
// matmul_packed (the scalar reference is reference::matmul).
void matmul(ConstMatView a, ConstMatView b, MatView c, PackedMatrix& packed,
            const float* bias = nullptr);
// The same with a temporary packing buffer.
void matmul(ConstMatView a, ConstMatView b, MatView c, const float* bias = nullptr);

// out = inᵀ.  in [r, c], out [c, r].
void transpose(ConstMatView in, MatView out);

// C = A·Bᵀ.  A [m, k], B [n, k], C [m, n]. Packs Bᵀ into `packed` (reused across calls).
void matmul_transposed(ConstMatView a, ConstMatView b, MatView c, PackedMatrix& packed);

namespace reference {

// The scalar reference (double accumulation, no SIMD) the tests compare the kernel with.
// C = A·B (+ bias).  A [m, k], B [k, n], C [m, n].
inline void matmul(ConstMatView a, ConstMatView b, MatView c, const float* bias = nullptr) {
  for (std::size_t i = 0; i < c.rows; ++i) {
    for (std::size_t j = 0; j < c.cols; ++j) {
      double sum = bias ? bias[j] : 0.0;
      for (std::size_t p = 0; p < a.cols; ++p) sum += double(a(i, p)) * double(b(p, j));
      c(i, j) = static_cast<float>(sum);
    }
  }
}

}  // namespace reference

}  // namespace attn
