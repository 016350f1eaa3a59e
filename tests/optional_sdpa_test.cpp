// The optional flash-attention op (optional_ops.hpp HasFusedSdpa): HideOptional hides it, the CPU provides it, and
// the CPU's fused forward (output and row logsumexp) and backward (dq, dk, dv) agree with the composed default on
// the same primitives, over several 64-row tiles, with causal masking, a broadcast bias holding -inf and a fully
// masked row (output 0, logsumexp +inf, no gradient).
#include <gtest/gtest.h>

#include <array>
#include <limits>
#include <vector>

#include "tests/support/hide_optional.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace {

using C = Cpu<double>;
using FP = C::FloatPrimitive;
static_assert(optional_ops::HasFusedSdpa<C> && optional_ops::HasFusedSdpa<Cpu<float>>);
static_assert(!optional_ops::HasFusedSdpa<HideOptional<C>>);
// Autodiff always records one node, whatever its inner backend has.
static_assert(optional_ops::HasFusedSdpa<Autodiff<HideOptional<C>>>);

constexpr double kInf = std::numeric_limits<double>::infinity();

FP values_of(std::array<int64_t, 4> shape, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> v(static_cast<std::size_t>(shape[0] * shape[1] * shape[2] * shape[3]));
  for (auto& x : v) x = -1.5 + 3 * rng.uniform();
  return Tensor<C, 4>::from_values(v, shape).primitive();
}
std::vector<double> vec(const FP& p) { return C::into_data<Float>(p).to_vec<double>(); }

void compare(int64_t l, int64_t s, bool causal) {
  const int64_t b = 2, h = 2, e = 5, ev = 3;
  const FP q = values_of({b, h, l, e}, 1), k = values_of({b, h, s, e}, 2), v = values_of({b, h, s, ev}, 3);
  auto bias_v = vec(values_of({b, 1, l, s}, 4));
  for (std::size_t i = 7; i < bias_v.size(); i += 9) bias_v[i] = -kInf;
  for (int64_t j = 0; j < s; ++j) bias_v[static_cast<std::size_t>(2 * s + j)] = -kInf;  // batch 0, row 2: fully masked
  const FP bias = Tensor<C, 4>::from_values(bias_v, std::array<int64_t, 4>{b, 1, l, s}).primitive();
  const SdpaOptions o{causal, 0.45};
  const auto fused = C::float_sdpa(q, k, v, &bias, o);
  const auto composed = optional_ops::composed::float_sdpa<C>(q, k, v, &bias, o);
  EXPECT_TRUE(close(vec(fused.out), vec(composed.out), 1e-12)) << "out";
  EXPECT_TRUE(close(vec(fused.lse), vec(composed.lse), 1e-12)) << "lse";
  EXPECT_EQ(vec(fused.lse)[2], kInf);
  for (int64_t x = 0; x < ev; ++x) EXPECT_EQ(vec(fused.out)[static_cast<std::size_t>(2 * ev + x)], 0.0);
  const FP dout = values_of({b, h, l, ev}, 5);
  const auto gf = C::float_sdpa_backward(q, k, v, &bias, fused.out, fused.lse, dout, o);
  const auto gc = optional_ops::composed::float_sdpa_backward<C>(q, k, v, &bias, composed.out, composed.lse, dout, o,
                                                                  false);
  EXPECT_TRUE(close(vec(gf.q), vec(gc.q), 1e-12)) << "dq";
  EXPECT_TRUE(close(vec(gf.k), vec(gc.k), 1e-12)) << "dk";
  EXPECT_TRUE(close(vec(gf.v), vec(gc.v), 1e-12)) << "dv";
  for (int64_t x = 0; x < e; ++x) EXPECT_EQ(vec(gf.q)[static_cast<std::size_t>(2 * e + x)], 0.0);
}

TEST(OptionalSdpa, CpuFusedMatchesComposed) {
  compare(70, 67, false);
  compare(70, 67, true);
  compare(130, 9, true);
}

}  // namespace
}  // namespace ember::test
