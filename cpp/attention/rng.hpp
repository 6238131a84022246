// Seeded random numbers: a NumPy-compatible generator and the seeded initialisers built on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace attn {

// Reproduces numpy.random.RandomState(seed) bit for bit: MT19937 seeded with init_genrand,
// random_sample() as (a >> 5, b >> 6) / 2^53, and the legacy polar Gaussian (randn) with its
// cached second value. So RandomState(s).randn(k) == NumpyRandomState(s).fill_randn(...).
class NumpyRandomState {
 public:
  explicit NumpyRandomState(std::uint32_t seed);

  std::uint32_t next_u32();
  double random_sample();  // [0, 1), 53 bits
  double randn();          // standard normal, NumPy's legacy_gauss
  void fill_randn(std::span<double> out);
  void fill_randn(std::span<float> out, double scale = 1.0);  // value = float(randn() * scale)
  // Uniform in [low, high): low + (high - low) * random_sample(), as RandomState.uniform.
  void fill_uniform(std::span<float> out, double low, double high);

 private:
  static constexpr int kStateSize = 624;
  std::uint32_t key_[kStateSize];
  int pos_ = kStateSize;
  bool has_gauss_ = false;
  double gauss_ = 0.0;
  void reload();
};

}  // namespace attn
