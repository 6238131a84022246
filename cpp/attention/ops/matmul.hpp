// Matrix products for the projections (X·Wᵀ), the scores (Q·Kᵀ) and the weighted sum (A·V).
#pragma once

#include "attention/tensor.hpp"

namespace attn {

// C = A·B (+ bias on every row).  A [m, k], B [k, n], C [m, n], bias [n] or nullptr.
// Any strides; C must not overlap A or B. A register-tiled xsimd kernel (the scalar
// reference is reference::matmul).
void matmul(ConstMatView a, ConstMatView b, MatView c, const float* bias = nullptr);

// out = inᵀ.  in [r, c], out [c, r].
void transpose(ConstMatView in, MatView out);

// C = A·Bᵀ.  A [m, k], B [n, k], C [m, n]. Packs Bᵀ into `packed` (resized as needed, reused
// across calls) and runs matmul; used for Q·Kᵀ.
void matmul_transposed(ConstMatView a, ConstMatView b, MatView c, AlignedVector<float>& packed);

}  // namespace attn
