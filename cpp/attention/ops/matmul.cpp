// Register-tiled matrix product (xsimd), with scalar tails; see matmul.hpp.
#include "attention/ops/matmul.hpp"

#include "attention/ops/simd.hpp"
#include "attention/reference.hpp"

namespace attn {

#if ATTN_SIMD
namespace {

using simd::Floats;
constexpr std::size_t W = simd::kWidth;

// C[rows, NV·W] block at (i, j) = A[i.., :] · B[:, j..] (+ bias[j..]): MR rows, NV vectors.
template <std::size_t MR, std::size_t NV>
inline void tile(ConstMatView a, ConstMatView b, MatView c, const float* bias, std::size_t i,
                 std::size_t j) {
  Floats acc[MR][NV];
  for (std::size_t v = 0; v < NV; ++v) {
    const Floats init = bias ? Floats::load_unaligned(bias + j + v * W) : Floats(0.0f);
    for (std::size_t r = 0; r < MR; ++r) acc[r][v] = init;
  }
  const float* a_rows[MR];
  for (std::size_t r = 0; r < MR; ++r) a_rows[r] = a.row(i + r);
  for (std::size_t p = 0; p < a.cols; ++p) {
    const float* b_row = b.row(p) + j;
    Floats b_vec[NV];
    for (std::size_t v = 0; v < NV; ++v) b_vec[v] = Floats::load_unaligned(b_row + v * W);
    for (std::size_t r = 0; r < MR; ++r) {
      const Floats a_val(a_rows[r][p]);
      for (std::size_t v = 0; v < NV; ++v) acc[r][v] = xsimd::fma(a_val, b_vec[v], acc[r][v]);
    }
  }
  for (std::size_t r = 0; r < MR; ++r) {
    for (std::size_t v = 0; v < NV; ++v) acc[r][v].store_unaligned(c.row(i + r) + j + v * W);
  }
}

// Rows [i, i + MR) of C, all columns: wide tiles, then single vectors, then scalar columns.
template <std::size_t MR>
inline void row_panel(ConstMatView a, ConstMatView b, MatView c, const float* bias, std::size_t i) {
  std::size_t j = 0;
  for (; j + 2 * W <= c.cols; j += 2 * W) tile<MR, 2>(a, b, c, bias, i, j);
  for (; j + W <= c.cols; j += W) tile<MR, 1>(a, b, c, bias, i, j);
  if (j == c.cols) return;
  for (std::size_t r = i; r < i + MR; ++r) {
    float* c_row = c.row(r);
    for (std::size_t col = j; col < c.cols; ++col) c_row[col] = bias ? bias[col] : 0.0f;
    const float* a_row = a.row(r);
    for (std::size_t p = 0; p < a.cols; ++p) {
      const float* b_row = b.row(p);
      for (std::size_t col = j; col < c.cols; ++col) c_row[col] += a_row[p] * b_row[col];
    }
  }
}

}  // namespace
#endif

void matmul(ConstMatView a, ConstMatView b, MatView c, const float* bias) {
  assert(a.cols == b.rows && c.rows == a.rows && c.cols == b.cols);
#if ATTN_SIMD
  constexpr std::size_t kRows = 4;
  std::size_t i = 0;
  for (; i + kRows <= c.rows; i += kRows) row_panel<kRows>(a, b, c, bias, i);
  for (; i < c.rows; ++i) row_panel<1>(a, b, c, bias, i);
#else
  reference::matmul(a, b, c, bias);
#endif
}

void transpose(ConstMatView in, MatView out) {
  assert(out.rows == in.cols && out.cols == in.rows);
  constexpr std::size_t kBlock = 16;  // cache blocking; the compiler vectorizes the inner copy
  for (std::size_t r0 = 0; r0 < in.rows; r0 += kBlock) {
    const std::size_t r1 = std::min(r0 + kBlock, in.rows);
    for (std::size_t c0 = 0; c0 < in.cols; c0 += kBlock) {
      const std::size_t c1 = std::min(c0 + kBlock, in.cols);
      for (std::size_t r = r0; r < r1; ++r) {
        for (std::size_t col = c0; col < c1; ++col) out(col, r) = in(r, col);
      }
    }
  }
}

void matmul_transposed(ConstMatView a, ConstMatView b, MatView c, AlignedVector<float>& packed) {
  assert(a.cols == b.cols && c.rows == a.rows && c.cols == b.rows);
  packed.resize(b.rows * b.cols);
  MatView b_t(packed.data(), b.cols, b.rows);  // [k, n]
  transpose(b, b_t);
  matmul(a, b_t, c);
}

}  // namespace attn
