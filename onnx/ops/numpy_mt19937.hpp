#pragma once
// NumPy's legacy generator (np.random.seed(s); np.random.uniform / random_sample): MT19937 seeded with
// init_genrand(s), doubles from two 32-bit draws (27 + 26 bits). Seeded ONNX Dropout draws its mask from it, so a
// seed gives the masks of ONNX's reference implementation (and of its backend test data), not an Ember-specific
// stream.
#include <array>
#include <cstdint>

namespace ember::onnx_import {

class NumpyMt19937 {
 public:
  explicit NumpyMt19937(uint32_t seed) {
    for (uint32_t i = 0; i < kN; ++i) {
      mt_[i] = seed;
      seed = 1812433253u * (seed ^ (seed >> 30)) + i + 1;
    }
  }
  uint32_t next32() {
    if (pos_ >= kN) twist();
    uint32_t y = mt_[pos_++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
  }
  // Uniform in [0, 1) like np.random.random_sample.
  double uniform() {
    const uint32_t a = next32() >> 5, b = next32() >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
  }

 private:
  static constexpr uint32_t kN = 624, kM = 397;
  void twist() {
    for (uint32_t k = 0; k < kN; ++k) {
      const uint32_t y = (mt_[k] & 0x80000000u) | (mt_[(k + 1) % kN] & 0x7fffffffu);
      mt_[k] = mt_[(k + kM) % kN] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    pos_ = 0;
  }
  std::array<uint32_t, kN> mt_{};
  uint32_t pos_ = kN;
};

}  // namespace ember::onnx_import
