// max_pool: block maxima of a matrix, rows reduced with SIMD, then each block of columns.
#include "attention/ops/max_pool.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "attention/ops/simd.hpp"

namespace attn {

namespace {
constexpr float kLowest = -std::numeric_limits<float>::infinity();
}  // namespace

void max_pool_reference(ConstMatView in, std::size_t step, MatView out) {
  for (std::size_t pr = 0; pr < out.rows; ++pr) {
    for (std::size_t pc = 0; pc < out.cols; ++pc) {
      float best = kLowest;
      for (std::size_t r = pr * step; r < std::min(in.rows, (pr + 1) * step); ++r) {
        for (std::size_t c = pc * step; c < std::min(in.cols, (pc + 1) * step); ++c) {
          best = std::max(best, in.row(r)[c]);
        }
      }
      out.row(pr)[pc] = best;
    }
  }
}

void max_pool(ConstMatView in, std::size_t step, MatView out) {
  std::vector<float> column_max(in.cols);  // [cols]: the block of rows reduced
  for (std::size_t pr = 0; pr < out.rows; ++pr) {
    std::fill(column_max.begin(), column_max.end(), kLowest);
    for (std::size_t r = pr * step; r < std::min(in.rows, (pr + 1) * step); ++r) {
      const float* row = in.row(r);
      std::size_t c = 0;
#if ATTN_SIMD
      using simd::Floats;
      for (; c + simd::kWidth <= in.cols; c += simd::kWidth) {
        const Floats best = xsimd::max(Floats::load_unaligned(column_max.data() + c),
                                       Floats::load_unaligned(row + c));
        best.store_unaligned(column_max.data() + c);
      }
#endif
      for (; c < in.cols; ++c) column_max[c] = std::max(column_max[c], row[c]);
    }
    float* pooled = out.row(pr);
    for (std::size_t pc = 0; pc < out.cols; ++pc) {
      const auto first = column_max.begin() + static_cast<std::ptrdiff_t>(pc * step);
      const auto last =
          column_max.begin() + static_cast<std::ptrdiff_t>(std::min(in.cols, (pc + 1) * step));
      pooled[pc] = *std::max_element(first, last);
    }
  }
}

}  // namespace attn
