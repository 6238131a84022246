// Max-pooling a matrix for drawing it small: each output cell is the largest value of a
// step × step block of the input, so a peak of attention survives any shrinking.
#pragma once

#include <cstddef>

#include "attention/tensor.hpp"

namespace attn {

// Rows (or columns) of the pooled matrix: ceil(count / step).
inline std::size_t pooled_size(std::size_t count, std::size_t step) {
  return (count + step - 1) / step;
}

// The step that pools a [rows, cols] matrix to at most side × side cells.
inline std::size_t pool_step(std::size_t rows, std::size_t cols, std::size_t side) {
  return pooled_size(rows > cols ? rows : cols, side);
}

// in [rows, cols] -> out [pooled_size(rows, step), pooled_size(cols, step)]; the last row and
// column of blocks may be partial. step >= 1. Vectorized along the columns.
void max_pool(ConstMatView in, std::size_t step, MatView out);

// The same, one cell at a time.
void max_pool_reference(ConstMatView in, std::size_t step, MatView out);

}  // namespace attn
