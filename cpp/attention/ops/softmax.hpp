// Row-wise, numerically stable softmax: the step that turns scores into attention weights.
#pragma once

#include "attention/tensor.hpp"

namespace attn {

// In place, each row: x_j <- e^{x_j - max(x)} / sum_k e^{x_k - max(x)}.
// -inf entries (masked keys) become exactly 0; a row whose entries are all -inf (a query
// with no visible key) becomes all zeros instead of NaN. Finite logits of any size (±1e4 …)
// give finite weights, since the largest exponent is always e^0 = 1.
void softmax_rows(MatView x);

}  // namespace attn
