// The optional fused LayerNorm op (optional_ops.hpp HasFusedLayerNorm): HideOptional hides it, the CPU provides it,
// and the CPU's fused forward (output, row mean, row rstd) and backward (dx, dgamma, dbeta) agree with the composed
// default on the same primitives, in f64 and f32, on a rank-3 input with an offset row, and with enough rows
// (over the parallel grain) that the backward's per-chunk dgamma / dbeta sums are exercised on several threads.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "tests/support/hide_optional.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace {

static_assert(optional_ops::HasFusedLayerNorm<Cpu<double>> && optional_ops::HasFusedLayerNorm<Cpu<float>>);
static_assert(!optional_ops::HasFusedLayerNorm<HideOptional<Cpu<double>>>);
// Autodiff always records one node, whatever its inner backend has.
static_assert(optional_ops::HasFusedLayerNorm<Autodiff<HideOptional<Cpu<double>>>>);

template <class C, std::size_t D>
typename C::FloatPrimitive values_of(std::array<int64_t, D> shape, uint64_t seed, double lo, double hi) {
  Rng rng(seed);
  int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = lo + (hi - lo) * rng.uniform();
  if (v.size() > 12)
    for (std::size_t j = 6; j < 12; ++j) v[j] += 5;  // an offset row (d = 6)
  return Tensor<C, D>::from_values(v, shape).primitive();
}
template <class C>
std::vector<double> vec(const typename C::FloatPrimitive& p) {
  return C::template into_data<Float>(p).template to_vec<double>();
}

template <class C>
void compare(int64_t rows, double tol) {
  const int64_t d = 6;
  const auto x = values_of<C, 3>({rows / 2, 2, d}, 1, -2, 2), dout = values_of<C, 3>({rows / 2, 2, d}, 2, -1, 1);
  const auto gamma = values_of<C, 1>({d}, 3, 0.5, 1.5), beta = values_of<C, 1>({d}, 4, -1, 1);
  const auto fused = C::float_layer_norm(x, gamma, beta, 1e-5);
  const auto composed = optional_ops::composed::float_layer_norm<C>(x, gamma, beta, 1e-5);
  EXPECT_EQ(C::template shape<Float>(fused.mean), C::template shape<Float>(composed.mean));
  EXPECT_TRUE(close(vec<C>(fused.out), vec<C>(composed.out), tol)) << "out";
  EXPECT_TRUE(close(vec<C>(fused.mean), vec<C>(composed.mean), tol)) << "mean";
  EXPECT_TRUE(close(vec<C>(fused.rstd), vec<C>(composed.rstd), tol)) << "rstd";
  const auto gf = C::float_layer_norm_backward(x, gamma, fused.mean, fused.rstd, dout);
  const auto gc = optional_ops::composed::float_layer_norm_backward<C>(x, gamma, composed.mean, composed.rstd, dout);
  EXPECT_TRUE(close(vec<C>(gf.x), vec<C>(gc.x), tol)) << "dx";
  EXPECT_TRUE(close(vec<C>(gf.gamma), vec<C>(gc.gamma), tol)) << "dgamma";
  EXPECT_TRUE(close(vec<C>(gf.beta), vec<C>(gc.beta), tol)) << "dbeta";
}

TEST(OptionalLayerNorm, CpuFusedMatchesComposed) {
  compare<Cpu<double>>(10, 1e-12);
  compare<Cpu<float>>(10, 1e-5);
  compare<Cpu<double>>(2 * (1 << 17) / 6 + 2, 1e-12);  // over the parallel grain: several backward chunks
}

}  // namespace
}  // namespace ember::test
