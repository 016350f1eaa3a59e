// The CPU backend's AVX-512 max pooling forward (backends/cpu/max_pool_vec.hpp) against its scalar kernels: the
// same values and the same argmax indices, bit for bit, over kernels, strides, dilation, padding (border outputs
// mixed with vector blocks that span rows), planes of a few outputs, wide rows read by contiguous loads, ties,
// -inf and NaN. Skipped on a CPU
// without AVX-512.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "backends/cpu/kernels.hpp"
#include "backends/cpu/max_pool_vec.hpp"
#include "engine/backend/pool_geometry.hpp"

namespace ember {
namespace {

using T = cpu::CpuTensor<float>;

struct Case {
  Shape x;
  std::array<int64_t, 2> k, s, p, d;
};

Pool2dOptions opts(const Case& c) {
  Pool2dOptions o;
  o.kernel = c.k;
  o.stride = c.s;
  o.padding = c.p;
  o.dilation = c.d;
  return o;
}

// Values drawn from a few levels, so windows hold ties; some -inf and NaN where asked.
T input(const Shape& s, bool specials, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> level(-4, 4), pick(0, 19);
  T t(s);
  for (int64_t i = 0; i < t.numel(); ++i) {
    float v = static_cast<float>(level(gen)) * 0.25f;
    if (specials) {
      const int r = pick(gen);
      if (r == 0) v = std::numeric_limits<float>::quiet_NaN();
      if (r == 1) v = -std::numeric_limits<float>::infinity();
    }
    t.data()[i] = v;
  }
  return t;
}

class MaxPoolVec : public ::testing::TestWithParam<Case> {
 protected:
  void TearDown() override { cpu::set_max_pool_vectorized(true); }
};

TEST_P(MaxPoolVec, MatchesScalarKernelBitForBit) {
  const Case c = GetParam();
  const Pool2dOptions o = opts(c);
  cpu::set_max_pool_vectorized(true);
  if (!cpu::max_pool_vectorized_usable(pool2d_geometry(c.x, o))) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (bool specials : {false, true}) {
    const T x = input(c.x, specials, specials ? 7u : 3u);
    cpu::set_max_pool_vectorized(true);
    const auto fast = cpu::max_pool2d(x, o);
    cpu::set_max_pool_vectorized(false);
    const auto slow = cpu::max_pool2d(x, o);
    ASSERT_EQ(fast.output.shape, slow.output.shape);
    // memcmp: NaN payloads and -inf compare as bits, which EXPECT_EQ on floats would not.
    EXPECT_EQ(0, std::memcmp(fast.output.data(), slow.output.data(), sizeof(float) * fast.output.numel()))
        << "values differ, specials " << specials;
    int64_t wrong = 0;
    for (int64_t i = 0; i < fast.indices.numel(); ++i) wrong += fast.indices.data()[i] != slow.indices.data()[i];
    EXPECT_EQ(wrong, 0) << "indices differ, specials " << specials;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, MaxPoolVec,
    ::testing::Values(Case{{64, 32, 8, 8}, {2, 2}, {2, 2}, {0, 0}, {1, 1}},     // the digits CNN: 16 outputs a plane
                      Case{{2, 3, 9, 11}, {2, 2}, {2, 2}, {0, 0}, {1, 1}},      // odd sizes, a ragged last block
                      Case{{1, 4, 23, 23}, {3, 3}, {2, 2}, {1, 1}, {1, 1}},     // ResNet's stem pool: padded borders
                      Case{{2, 2, 17, 13}, {3, 2}, {1, 3}, {1, 1}, {2, 1}},     // stride 1 / 3, dilation, padding
                      Case{{1, 2, 5, 40}, {1, 3}, {1, 1}, {0, 1}, {1, 1}},      // a 1-D pool (height 1 kernel)
                      Case{{3, 1, 4, 4}, {4, 4}, {1, 1}, {0, 0}, {1, 1}},       // one output per plane
                      Case{{1, 1, 7, 7}, {3, 3}, {1, 1}, {1, 1}, {3, 3}},       // dilation past the padding
                      // Rows of >= 16 inner outputs: contiguous loads (stride 2 / 1), ragged runs, padded borders.
                      Case{{1, 3, 70, 70}, {3, 3}, {2, 2}, {1, 1}, {1, 1}},     // ResNet's stem pool, 35 wide
                      Case{{2, 2, 9, 37}, {2, 2}, {2, 2}, {0, 0}, {1, 1}},      // 18 wide, odd input width
                      Case{{1, 2, 6, 40}, {3, 3}, {1, 1}, {1, 1}, {1, 2}},      // stride 1, dilated columns
                      Case{{1, 1, 3, 16}, {1, 1}, {1, 1}, {0, 0}, {1, 1}}));    // exactly 16, the plane's end

}  // namespace
}  // namespace ember
