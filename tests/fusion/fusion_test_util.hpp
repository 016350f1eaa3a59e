#pragma once
// What the CPU and Vulkan fusion tests share: seeded input values, and the bit-for-bit comparison a fused chain
// must pass against the ops one by one (each backend's kernel runs the eager ops' own arithmetic).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/tensor/random.hpp"

namespace ember::test {

// n values uniform in [lo, hi) from `seed`.
inline std::vector<double> uniform(int64_t n, uint64_t seed, double lo = -3, double hi = 3) {
  Rng rng(seed);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = lo + (hi - lo) * rng.uniform();
  return v;
}

// The same bits (NaN where NaN, -0 apart from +0).
inline void expect_same_bits(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    uint32_t a, b;
    std::memcpy(&a, &got[i], 4);
    std::memcpy(&b, &want[i], 4);
    ASSERT_EQ(a, b) << "element " << i << ": " << got[i] << " vs " << want[i];
  }
}

}  // namespace ember::test
