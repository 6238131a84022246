// Logit soft-capping (Gemma 2's attn_logit_softcapping and final_logit_softcapping): each value
// x → cap · tanh(x / cap), which bounds it to (−cap, cap) and leaves small values almost as
// they are. In place on one row (the attention scores a query sees, or one position's logits).
#pragma once

#include <cmath>
#include <cstddef>

namespace attn {

namespace reference {

// x [count] = cap · tanh(x / cap), in double.
template <class T>
void softcap_forward(T* x, std::size_t count, double cap) {
  for (std::size_t i = 0; i < count; ++i) x[i] = T(cap * std::tanh(double(x[i]) / cap));
}

}  // namespace reference

// The same in float as transformers computes it: x / cap, tanh, × cap (xsimd's tanh on whole
// SIMD batches from x[0], the rest scalar; call it per row so a row's values never depend on the
// rows around it).
void softcap_forward(float* x, std::size_t count, float cap);

}  // namespace attn
