// The CPU's AVX-512 GELU kernels (backends/cpu/gelu_avx512.hpp) against the portable formulas they replace
// (vec_math.hpp through the compiler's vectorization, run with set_gelu_avx512(false)), on the same machine. Their
// accuracy against long double is the op suite's (tests/ops/elementwise_approx_test.cpp); here: the forward has the
// portable bits, the backward is within a few ulp of it, special values go through alike, and an element's result
// does not depend on where a span starts or ends (the fused chains' tiles cut arrays elsewhere than the eager ops).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/kernels.hpp"
#include "backends/cpu/gelu_avx512.hpp"

namespace ember {
namespace {

// Restores the AVX-512 kernels whatever a test does.
struct PortableGelu {
  PortableGelu() { cpu::set_gelu_avx512(false); }
  ~PortableGelu() { cpu::set_gelu_avx512(true); }
};

std::vector<float> gelu_inputs() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> xs;
  for (int i = -20000; i <= 20000; ++i) xs.push_back(static_cast<float>(i) * 1e-3f);
  // erf's clamp at |x / sqrt 2| = 4, exp's lower limit (x^2 / 2 = 87.3), tiny and huge values, NaN and infinities
  for (float v : {5.65685f, 5.65686f, 13.2f, 13.22f, 13.3f, 1e-10f, 1e-30f, 1e-38f, 1e30f, 3.4e38f, inf,
                  std::numeric_limits<float>::quiet_NaN()}) {
    xs.push_back(v);
    xs.push_back(-v);
  }
  return xs;
}

bool same_bits(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

std::vector<float> forward(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  cpu::unary_span(UnaryOp::Gelu, x.data(), y.data(), static_cast<int64_t>(x.size()));
  return y;
}

std::vector<float> backward(const std::vector<float>& x, const std::vector<float>& g) {
  std::vector<float> y(x.size());
  cpu::gelu_backward_span(x.data(), g.data(), y.data(), static_cast<int64_t>(x.size()));
  return y;
}

// Where the portable loop is multi-versioned (vector_clones.hpp: GCC, no ThreadSanitizer), this CPU runs its AVX-512
// clone, whose erf polynomial contracts to the same FMAs as the intrinsics. A build without clones runs it for the
// baseline ISA, without FMA: there the two round differently and only the backward test's bound applies.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
constexpr bool kPortableHasFma = true;
#else
constexpr bool kPortableHasFma = false;
#endif

TEST(GeluAvx512, ForwardHasThePortableBits) {
  if (!cpu::gelu_avx512_usable()) GTEST_SKIP() << "no AVX-512F on this CPU: the portable formula is the only path";
  if (!kPortableHasFma) GTEST_SKIP() << "the portable loop is compiled for the baseline ISA here (no FMA)";
  const auto xs = gelu_inputs();
  const auto fast = forward(xs);
  std::vector<float> portable;
  {
    PortableGelu off;
    portable = forward(xs);
  }
  int diff = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (!same_bits(fast[i], portable[i]) && ++diff <= 5)
      ADD_FAILURE() << "gelu(" << xs[i] << "): AVX-512 " << fast[i] << ", portable " << portable[i];
  }
  EXPECT_EQ(diff, 0);
}

TEST(GeluAvx512, BackwardWithinTwoUlpOfThePortableFormula) {
  if (!cpu::gelu_avx512_usable()) GTEST_SKIP() << "no AVX-512F on this CPU: the portable formula is the only path";
  const auto xs = gelu_inputs();
  for (const float gv : {1.0f, -2.5f}) {
    const std::vector<float> g(xs.size(), gv);
    const auto fast = backward(xs, g);
    std::vector<float> portable;
    {
      PortableGelu off;
      portable = backward(xs, g);
    }
    // Both round Phi(x) + x phi(x) from the same erf: they differ where exp's contraction and 2^n scaling do, by an
    // ulp of the result, or of |g| x phi(x) where the sum cancels.
    const float one_ulp = std::nextafter(1.0f, 2.0f) - 1.0f;
    double worst = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const float a = fast[i], b = portable[i];
      if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b)) {
        EXPECT_TRUE(same_bits(a, b)) << "x = " << xs[i] << ": " << a << " against " << b;
        continue;
      }
      const double ulp_b = std::nextafter(std::fabs(b), std::numeric_limits<float>::infinity()) - std::fabs(b);
      const double err = std::fabs(static_cast<double>(a) - b) / (ulp_b + std::fabs(gv) * one_ulp * 0.5);
      worst = std::max(worst, err);
      EXPECT_LE(err, 2.0) << "x = " << xs[i] << ", g = " << gv << ": " << a << " against " << b;
    }
    std::printf("[ worst    ] gelu backward, g = %g: AVX-512 within %.3g ulp of the portable formula\n", gv, worst);
  }
}

// Every element of a span has the bits it has in any other span: tails (masked lanes) compute what full vectors do.
TEST(GeluAvx512, SpanBoundsDoNotChangeAnElement) {
  std::vector<float> xs, gs;
  for (int i = 0; i < 1031; ++i) {
    xs.push_back(static_cast<float>(i % 211) * 0.05f - 5.0f);
    gs.push_back(static_cast<float>(i % 13) * 0.25f - 1.5f);
  }
  const auto whole_f = forward(xs);
  const auto whole_b = backward(xs, gs);
  for (const int64_t begin : {0, 1, 5, 16, 17}) {
    for (const int64_t len : {1, 7, 15, 16, 17, 31, 512, 1000}) {
      std::vector<float> f(static_cast<std::size_t>(len)), b(static_cast<std::size_t>(len));
      cpu::unary_span(UnaryOp::Gelu, xs.data() + begin, f.data(), len);
      cpu::gelu_backward_span(xs.data() + begin, gs.data() + begin, b.data(), len);
      for (int64_t i = 0; i < len; ++i) {
        const auto at = static_cast<std::size_t>(begin + i);
        ASSERT_TRUE(same_bits(f[static_cast<std::size_t>(i)], whole_f[at])) << "forward, begin " << begin << ", length "
                                                                             << len << ", element " << i;
        ASSERT_TRUE(same_bits(b[static_cast<std::size_t>(i)], whole_b[at])) << "backward, begin " << begin
                                                                             << ", length " << len << ", element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace ember
