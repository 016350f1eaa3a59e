// The CPU Adam kernel flushes denormal moments to zero (backends/cpu/denormals.hpp says why: a denormal operand
// costs a microcode assist per multiply, and dead units' moments decay into that range in long training runs), and
// leaves the calling thread's floating-point mode as it found it.
#include <gtest/gtest.h>
#include <xmmintrin.h>

#include <cfloat>
#include <cmath>

#include "backends/cpu/kernels.hpp"

namespace ember {
namespace {

using T = cpu::CpuTensor<float>;

T filled(int64_t n, float v) {
  T t(Shape{n});
  for (int64_t i = 0; i < n; ++i) t.data()[i] = v;
  return t;
}

TEST(CpuAdamDenormals, MomentsDecayingBelowFltMinBecomeZero) {
  constexpr int64_t n = 1000;  // long enough for the vectorized body and a tail
  const T w = filled(n, 0.5f), g = filled(n, 0.0f);
  // m * 0.9 + 0 * 0.1 and v * 0.999 land below FLT_MIN (1.1755e-38): without flushing both are denormal results.
  // With it both become 0 (the assertion below allows any value that is not denormal).
  const T m = filled(n, 1.2e-38f), v = filled(n, 1.176e-38f);
  AdamStepArgs a;
  a.bias_correction1 = 0.5;
  a.bias_correction2 = 0.5;
  const unsigned mode_before = _mm_getcsr();
  const auto r = cpu::adam_step(w, g, &m, &v, a);
  constexpr unsigned kStickyFlags = 0x3f;  // exception flags that any float op may raise; the modes must match
  EXPECT_EQ(_mm_getcsr() & ~kStickyFlags, mode_before & ~kStickyFlags) << "the kernel must restore the MXCSR";
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_NE(std::fpclassify(r.exp_avg.data()[i]), FP_SUBNORMAL) << i;
    ASSERT_EQ(r.exp_avg_sq.data()[i], 0.0f) << i;
    ASSERT_EQ(r.param.data()[i], 0.5f) << i;  // a denormal moment's step is far below one ulp of the weight
  }
}

TEST(CpuAdamDenormals, DenormalInputMomentsReadAsZero) {
  constexpr int64_t n = 37;
  const T w = filled(n, -2.0f), g = filled(n, 0.0f);
  const T m = filled(n, FLT_MIN / 8), v = filled(n, FLT_MIN / 4);  // denormal operands
  AdamStepArgs a;
  const auto r = cpu::adam_step(w, g, &m, &v, a);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(r.exp_avg.data()[i], 0.0f) << i;
    ASSERT_EQ(r.exp_avg_sq.data()[i], 0.0f) << i;
    ASSERT_EQ(r.param.data()[i], -2.0f) << i;
  }
}

TEST(CpuAdamDenormals, NormalMomentsAreUnchangedByTheFlush) {
  // The usual Adam arithmetic for ordinary values: m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2.
  const T w = filled(8, 1.0f), g = filled(8, 0.25f), m = filled(8, 0.125f), v = filled(8, 0.0625f);
  AdamStepArgs a;
  const auto r = cpu::adam_step(w, g, &m, &v, a);
  EXPECT_FLOAT_EQ(r.exp_avg.data()[3], 0.125f * 0.9f + 0.25f * 0.1f);
  EXPECT_FLOAT_EQ(r.exp_avg_sq.data()[3], 0.0625f * 0.999f + 0.25f * 0.25f * 0.001f);
}

}  // namespace
}  // namespace ember
