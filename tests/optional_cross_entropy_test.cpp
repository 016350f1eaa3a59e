// The optional fused cross-entropy op (optional_ops.hpp HasFusedCrossEntropy): HideOptional hides it, the CPU
// provides it, and the CPU's row kernels (loss, row logsumexp, gradient) agree with the composed default on the
// same primitives in f64 and f32: a narrow row, a row longer than the kernels' 16 lanes with a remainder, and enough
// rows to split over threads. Both reject a target outside [0, C) with IndexError.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "tests/support/hide_optional.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace {

static_assert(optional_ops::HasFusedCrossEntropy<Cpu<double>> && optional_ops::HasFusedCrossEntropy<Cpu<float>>);
static_assert(!optional_ops::HasFusedCrossEntropy<HideOptional<Cpu<double>>>);
// Autodiff always records one node, whatever its inner backend has.
static_assert(optional_ops::HasFusedCrossEntropy<Autodiff<HideOptional<Cpu<double>>>>);

template <class C>
typename C::FloatPrimitive logits_of(int64_t n, int64_t c, uint64_t seed, double spread) {
  Rng rng(seed);
  std::vector<double> v(static_cast<std::size_t>(n * c));
  for (auto& x : v) x = spread * (2 * rng.uniform() - 1);
  return Tensor<C, 2>::from_values(v, {n, c}).primitive();
}
template <class C>
typename C::IntPrimitive targets_of(int64_t n, int64_t c) {
  std::vector<int64_t> t(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[static_cast<std::size_t>(i)] = (i * 7 + 3) % c;
  return Tensor<C, 1, Int>::from_values(t, {n}).primitive();
}
template <class C>
std::vector<double> vec(const typename C::FloatPrimitive& p) {
  return C::template into_data<Float>(p).template to_vec<double>();
}

template <class C>
void compare(int64_t n, int64_t c, double tol) {
  SCOPED_TRACE(::testing::Message() << "[" << n << ", " << c << "]");
  const auto x = logits_of<C>(n, c, 11 + static_cast<uint64_t>(c), 6.0);
  const auto t = targets_of<C>(n, c);
  Rng rng(5);
  std::vector<double> gv(static_cast<std::size_t>(n));
  for (auto& v : gv) v = rng.uniform() - 0.25;
  const auto g = Tensor<C, 1>::from_values(gv, {n}).primitive();
  const auto fused = C::float_cross_entropy(x, t);
  const auto composed = optional_ops::composed::float_cross_entropy<C>(x, t);
  EXPECT_EQ(C::template shape<Float>(fused.loss), Shape({n}));
  EXPECT_EQ(C::template shape<Float>(fused.lse), Shape({n}));
  EXPECT_TRUE(close(vec<C>(fused.loss), vec<C>(composed.loss), tol)) << "loss";
  EXPECT_TRUE(close(vec<C>(fused.lse), vec<C>(composed.lse), tol)) << "lse";
  const auto dx = C::float_cross_entropy_backward(x, t, fused.lse, g);
  EXPECT_EQ(C::template shape<Float>(dx), Shape({n, c}));
  EXPECT_TRUE(close(vec<C>(dx), vec<C>(optional_ops::composed::float_cross_entropy_backward<C>(x, t, composed.lse, g)),
                    tol))
      << "dx";
}

TEST(OptionalCrossEntropy, CpuFusedMatchesComposed) {
  for (const auto [n, c] : {std::array<int64_t, 2>{5, 7}, {3, 37}, {64, 10}}) {
    compare<Cpu<double>>(n, c, 1e-12);
    compare<Cpu<float>>(n, c, 1e-6);
  }
  compare<Cpu<float>>(3 * (1 << 17) / 10, 10, 1e-6);  // over the parallel grain: rows split over threads
}

TEST(OptionalCrossEntropy, TargetsOutsideTheClassesAreIndexErrors) {
  using C = Cpu<float>;
  using Hidden = HideOptional<C>;
  const auto x = logits_of<C>(3, 4, 1, 1.0);
  for (const int64_t bad : {int64_t{-1}, int64_t{4}}) {
    const auto t = Tensor<C, 1, Int>::from_values(std::vector<int64_t>{0, bad, 3}, {3}).primitive();
    EXPECT_THROW(C::float_cross_entropy(x, t), IndexError) << bad;
    EXPECT_THROW(optional_ops::float_cross_entropy<Hidden>(x, t), IndexError) << bad;
    const auto g = Tensor<C, 1>::from_values(std::vector<double>{1, 1, 1}, {3}).primitive();
    EXPECT_THROW(C::float_cross_entropy_backward(x, t, g, g), IndexError) << bad;
  }
  const auto short_t = Tensor<C, 1, Int>::from_values(std::vector<int64_t>{0, 1}, {2}).primitive();
  EXPECT_THROW(C::float_cross_entropy(x, short_t), ShapeError);
}

}  // namespace
}  // namespace ember::test
