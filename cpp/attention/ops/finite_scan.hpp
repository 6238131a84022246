// One pass over a forward's input: its largest magnitude (for the float32 range check) and
// whether every value is finite, vectorized, with the scalar reference beside it.
#pragma once

#include <span>

namespace attn {

struct FiniteScan {
  float max_abs = 0.0f;  // largest |value| (0 for none); meaningful only when finite
  bool finite = true;    // no NaN and no ±∞
};

// values [count]
FiniteScan finite_scan(std::span<const float> values);

// The same, one value at a time.
FiniteScan finite_scan_reference(std::span<const float> values);

}  // namespace attn
