// The optional fused Linear op (optional_ops.hpp HasFusedLinear): HideOptional hides it, the CPU provides it, and
// the CPU's GEMM-onto-bias-rows agrees with the composed matmul + broadcast add, with and without a bias, in f64 and
// f32, for a single row (BLAS's gemv path), many rows, and zero rows.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "tests/support/hide_optional.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace {

static_assert(optional_ops::HasFusedLinear<Cpu<double>> && optional_ops::HasFusedLinear<Cpu<float>>);
static_assert(!optional_ops::HasFusedLinear<HideOptional<Cpu<double>>>);
static_assert(optional_ops::HasFusedLinear<Autodiff<HideOptional<Cpu<double>>>>);

template <class C, std::size_t D>
typename C::FloatPrimitive values_of(std::array<int64_t, D> shape, uint64_t seed) {
  Rng rng(seed);
  int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = -1 + 2 * rng.uniform();
  return Tensor<C, D>::from_values(v, shape).primitive();
}

template <class C>
void compare(int64_t m, double tol) {
  const int64_t k = 7, n = 5;
  const auto x = values_of<C, 2>({m, k}, 1), w = values_of<C, 2>({k, n}, 2), b = values_of<C, 1>({n}, 3);
  auto vec = [](const typename C::FloatPrimitive& p) {
    return C::template into_data<Float>(p).template to_vec<double>();
  };
  for (bool with_bias : {true, false}) {
    const auto* pb = with_bias ? &b : nullptr;
    const auto fused = C::float_linear(x, w, pb);
    const auto composed = optional_ops::composed::float_linear<C>(x, w, pb);
    EXPECT_EQ(C::template shape<Float>(fused), (Shape{m, n}));
    EXPECT_TRUE(close(vec(fused), vec(composed), tol)) << "m " << m << " bias " << with_bias;
  }
}

TEST(OptionalLinear, CpuFusedMatchesComposed) {
  for (int64_t m : {1, 9, 0}) {
    compare<Cpu<double>>(m, 1e-12);
    compare<Cpu<float>>(m, 1e-6);
  }
}

}  // namespace
}  // namespace ember::test
