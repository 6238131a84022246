// Sinusoidal / learned encodings and ALiBi (see positional.hpp; RoPE is in rope.hpp).
#include "attention/ops/positional.hpp"

#include <cmath>
#include <string>

#include "attention/error.hpp"
#include "attention/rng.hpp"

namespace attn {

void sinusoidal_encoding(MatView out) {
  for (std::size_t pos = 0; pos < out.rows; ++pos) {
    for (std::size_t col = 0; col < out.cols; ++col) {  // columns 2i (sin) and 2i+1 (cos)
      const double angle = sinusoid_angle(pos, col, out.cols);
      out(pos, col) = static_cast<float>(col % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
}

void learned_encoding(MatView out, std::uint32_t seed) {
  // Its own stream, distinct from the weights' (which use `seed` itself).
  NumpyRandomState rng(seed ^ 0x5EED0001u);
  for (std::size_t pos = 0; pos < out.rows; ++pos) {
    rng.fill_randn(std::span<float>(out.row(pos), out.cols), 0.5);
  }
}

namespace {
// Slopes for a power-of-two head count: a geometric sequence starting at 2^{-8/H}.
std::vector<double> power_of_two_slopes(std::size_t heads) {
  std::vector<double> slopes(heads);
  const double start = std::pow(2.0, -8.0 / static_cast<double>(heads));
  double slope = start;
  for (auto& s : slopes) {
    s = slope;
    slope *= start;
  }
  return slopes;
}
}  // namespace

std::vector<float> alibi_slopes(std::size_t heads) {
  std::size_t pow2 = 1;
  while (pow2 * 2 <= heads) pow2 *= 2;
  std::vector<double> slopes = power_of_two_slopes(pow2);
  if (pow2 < heads) {  // the reference implementation's rule for other head counts
    const std::vector<double> extra = power_of_two_slopes(2 * pow2);
    for (std::size_t i = 0; slopes.size() < heads; i += 2) slopes.push_back(extra[i]);
  }
  return std::vector<float>(slopes.begin(), slopes.end());
}

void alibi_bias(MatView bias, float slope) {
  for (std::size_t i = 0; i < bias.rows; ++i) {
    for (std::size_t j = 0; j < bias.cols; ++j) {
      const float distance = static_cast<float>(i > j ? i - j : j - i);
      bias(i, j) = -slope * distance;
    }
  }
}

}  // namespace attn
