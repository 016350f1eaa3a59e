#pragma once
// What the CPU, Vulkan and CUDA fusion tests share: seeded input values, a chain over every instruction kind, the
// bit-for-bit comparison a fused chain must pass against the ops one by one (the CPU's and Vulkan's kernels run the
// eager ops' own arithmetic), and the relative one for sums (and for CUDA's contracted multiply-adds).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/tensor/random.hpp"
#include "engine/tensor/tensor.hpp"

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

// The same bits, except that a NaN matches any NaN. Where both operands of an op are NaN, x86 returns the first
// one's payload and sign, and a compiler orders commutative operands as it likes: which NaN comes out is not part of
// an op's result (the same op compiled twice may pick differently).
inline void expect_same_bits_any_nan(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]) && std::isnan(want[i])) continue;
    uint32_t a, b;
    std::memcpy(&a, &got[i], 4);
    std::memcpy(&b, &want[i], 4);
    ASSERT_EQ(a, b) << "element " << i << ": " << got[i] << " vs " << want[i];
  }
}

// Within rel of each wanted value (absolute below 1).
inline void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rel) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], rel * std::max(1.0, std::abs(double(want[i])))) << "element " << i;
}

// A chain over every instruction kind: a broadcast bias row, a scalar tensor, an Int column cast to float, a Bool
// mask (where and mask_fill), expand, full, unary, scalar and binary ops, on [rows, cols].
template <class B>
Tensor<B, 2> every_instruction_chain(int64_t rows, int64_t cols, double scale = 0.75) {
  const auto x = Tensor<B, 2>::from_values(uniform(rows * cols, 1), {rows, cols});
  const auto bias = Tensor<B, 1>::from_values(uniform(cols, 2), {cols});
  const auto s = Tensor<B, 1>::from_values({scale}, {1});
  std::vector<int64_t> ints(static_cast<std::size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) ints[static_cast<std::size_t>(i)] = i % 7 - 3;
  const auto idx = Tensor<B, 2, Int>::from_values(ints, {rows, 1});
  std::vector<bool> keep(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < keep.size(); ++i) keep[i] = (i * 2654435761u) % 5 < 3;
  const auto mask = Tensor<B, 2, Bool>::from_values(keep, {rows, cols});

  auto y = (x + bias.template unsqueeze<2>(0)).gelu();                 // linear's bias, GELU
  y = y * s.template unsqueeze<2>(0) + idx.to_float();                 // broadcast scalar, Int column cast
  y = y.mask_where(mask, Tensor<B, 2>::full({rows, cols}, -0.5)).exp().sub_scalar(1.0);  // where, full
  y = y.mask_fill(mask.logical_not(), 2.0) * mask.to_float();          // mask_fill, Bool cast
  y = y + bias.template unsqueeze<2>(0).expand(std::array<int64_t, 2>{rows, cols}).tanh().pow_scalar(2.0);
  return y.maximum(x.sigmoid()).div(x.abs().add_scalar(1.0));
}

}  // namespace ember::test
