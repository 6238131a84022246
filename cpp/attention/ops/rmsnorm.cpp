// RMSNorm's float forward, see rmsnorm.hpp.
#include "attention/ops/rmsnorm.hpp"

#include "attention/ops/vec.hpp"

namespace attn {

void rmsnorm_forward(const float* x, const float* weight, float* out, std::size_t rows,
                     std::size_t d, float eps, RmsNormWeight form) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    float* o = out + r * d;
    const float s = 1.0f / std::sqrt(vec::dot(xr, xr, d) / float(d) + eps);
    if (form == RmsNormWeight::OnePlus) {
      for (std::size_t i = 0; i < d; ++i) o[i] = xr[i] * s * (1.0f + weight[i]);
    } else {
      for (std::size_t i = 0; i < d; ++i) o[i] = xr[i] * s * weight[i];
    }
  }
}

}  // namespace attn
