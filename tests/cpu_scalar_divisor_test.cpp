// ScalarDivisor (backends/cpu/scalar_divisor.hpp) divides without the divider and must round exactly as the division
// does; the fused CPU Adam uses it and must keep PyTorch's bits.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "backends/cpu/kernels.hpp"
#include "backends/cpu/scalar_divisor.hpp"

namespace ember {
namespace {

// The divisors Adam uses: sqrt(1 - beta2^t) rounded to float, for PyTorch's default beta2 and two others, plus
// arbitrary ones.
std::vector<float> adam_divisors() {
  std::vector<float> cs;
  for (double beta2 : {0.999, 0.99, 0.98})
    for (int t : {1, 2, 3, 7, 10, 100, 1000, 5000})
      cs.push_back(static_cast<float>(std::sqrt(1.0 - std::pow(beta2, t))));
  for (float c : {1.0f, 0.75f, 0.70710677f, 0.99999994f, 0.50000006f, 0.031622775f}) cs.push_back(c);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.03f, 1.0f);
  for (int i = 0; i < 8; ++i) cs.push_back(u(rng));
  return cs;
}

// RN(a / c) depends only on a's significand while nothing under- or overflows (scaling a by a power of two scales
// the quotient exactly), so sweeping every significand of one binade checks a divisor for every normal dividend.
TEST(ScalarDivisor, RoundsAsTheDivisionForEverySignificand) {
  for (float c : adam_divisors()) {
    SCOPED_TRACE(::testing::Message() << "c = " << c);
    const cpu::ScalarDivisor<float> d(c);
    int64_t wrong = 0;
    float first_wrong = 0;
    for (uint32_t m = 0; m < (1u << 23); ++m) {
      const float a = std::bit_cast<float>(0x3f800000u | m);  // [1, 2)
      if (std::bit_cast<uint32_t>(d.divide(a)) != std::bit_cast<uint32_t>(a / c) && wrong++ == 0) first_wrong = a;
    }
    EXPECT_EQ(wrong, 0) << "first at a = " << first_wrong;
  }
}

TEST(ScalarDivisor, SpecialDividendsAsTheDivision) {
  const float inf = std::numeric_limits<float>::infinity(), big = std::numeric_limits<float>::max();
  for (float c : {1.0f, 0.5f, 0.0316f}) {
    const cpu::ScalarDivisor<float> d(c);
    EXPECT_EQ(d.divide(0.0f), 0.0f);
    EXPECT_EQ(d.divide(inf), inf);  // the FMA correction alone would give inf - inf = NaN
    EXPECT_TRUE(std::isnan(d.divide(std::numeric_limits<float>::quiet_NaN())));
    EXPECT_EQ(d.divide(big), big / c);  // overflows to inf for c < 1, exactly big for c = 1
  }
}

// The fused Adam kernel (vectorized, with a tail) against the division-based formula written out per element in
// PyTorch 1.13's order, bit for bit, over many steps' bias corrections.
TEST(ScalarDivisor, FusedAdamKeepsTheDivisionsBits) {
  constexpr int64_t n = 4099;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uw(-1, 1), ug(-1e-2f, 1e-2f), uv(0, 1e-4f);
  cpu::CpuTensor<float> w(Shape{n}), g(Shape{n}), m(Shape{n}), v(Shape{n});
  for (int64_t i = 0; i < n; ++i) {
    w.data()[i] = uw(rng);
    g.data()[i] = ug(rng);
    m.data()[i] = ug(rng) * 0.5f;
    v.data()[i] = i % 97 == 0 ? 0.0f : uv(rng);  // zero second moments too
  }
  for (int t : {1, 2, 3, 10, 57, 1000}) {
    SCOPED_TRACE(::testing::Message() << "step " << t);
    AdamStepArgs a;
    a.lr = 1e-3;
    a.bias_correction1 = 1 - std::pow(a.beta1, t);
    a.bias_correction2 = 1 - std::pow(a.beta2, t);
    const auto r = cpu::adam_step(w, g, &m, &v, a);
    const float b1 = static_cast<float>(a.beta1), one_b1 = static_cast<float>(1 - a.beta1),
                b2 = static_cast<float>(a.beta2), one_b2 = static_cast<float>(1 - a.beta2),
                sqrt_bc2 = static_cast<float>(std::sqrt(a.bias_correction2)), eps = static_cast<float>(a.eps),
                step = static_cast<float>(a.lr / a.bias_correction1);
    for (int64_t i = 0; i < n; ++i) {
      const float gi = g.data()[i];
      const float mi = m.data()[i] * b1 + gi * one_b1;
      const float gg = gi * gi * one_b2;
      const float vi = v.data()[i] * b2 + gg;
      const float denom = std::sqrt(vi) / sqrt_bc2 + eps;
      const float wi = w.data()[i] - mi / denom * step;
      ASSERT_EQ(std::bit_cast<uint32_t>(r.exp_avg.data()[i]), std::bit_cast<uint32_t>(mi)) << i;
      ASSERT_EQ(std::bit_cast<uint32_t>(r.exp_avg_sq.data()[i]), std::bit_cast<uint32_t>(vi)) << i;
      ASSERT_EQ(std::bit_cast<uint32_t>(r.param.data()[i]), std::bit_cast<uint32_t>(wi)) << i;
    }
  }
}

}  // namespace
}  // namespace ember
