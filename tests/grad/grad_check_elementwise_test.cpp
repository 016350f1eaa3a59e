// Finite-difference gradient checks (f64) for the elementwise families (unary, scalar, binary with broadcasting)
// and for reductions (sum, mean, prod with zeros, max/min, var, softmax, log_softmax, max_dim_with_indices).
#include <gtest/gtest.h>

#include "tests/grad/grad_check.hpp"

namespace ember::gradcheck {
namespace elementwise_grads {

using S2 = std::array<int64_t, 2>;
using S3 = std::array<int64_t, 3>;

// x = n + s * f with n an integer in [-3, 3], s = +-1 and f in [0.1, 0.4]: away from the jumps of floor, ceil,
// round (integers and halves) and sign (0).
T<2> away_from_jumps(uint64_t seed) {
  Rng rng(seed);
  std::vector<double> v(12);
  for (auto& x : v) {
    const double n = static_cast<double>(static_cast<int64_t>(rng.next() % 7) - 3);
    const double f = 0.1 + 0.3 * rng.uniform();
    x = n + (rng.uniform() < 0.5 ? -f : f);
    if (std::abs(x) < 0.1) x = 0.25;
  }
  return tensor<2>(v, {3, 4});
}

// Two tensors whose values are all pairwise distinct (for maximum/minimum: no ties between a and b).
std::pair<T<3>, T<3>> distinct_pair(S3 sa, S3 sb, uint64_t seed) {
  const int64_t na = numel(sa), nb = numel(sb);
  auto all = distinct<1>({na + nb}, -2.0, 2.0, seed).to_vec<double>();
  std::vector<double> a(all.begin(), all.begin() + na), b(all.begin() + na, all.end());
  return {tensor<3>(a, sa), tensor<3>(b, sb)};
}

// ---------------------------------------------------------------- unary
#define UNARY_GRAD(NAME, EXPR, INPUT)                                          \
  TEST(GradCheckUnary, NAME) {                                                 \
    EXPECT_TRUE(check_grad([](const T<2>& x) { return EXPR; }, INPUT));        \
  }

UNARY_GRAD(Neg, x.neg(), (uniform<2>({3, 4}, -2, 2, 1)))
UNARY_GRAD(NegOperator, -x, (uniform<2>({3, 4}, -2, 2, 2)))
UNARY_GRAD(Abs, x.abs(), (away_from_zero<2>({3, 4}, 0.2, 2, 3)))
UNARY_GRAD(Exp, x.exp(), (uniform<2>({3, 4}, -2, 2, 4)))
UNARY_GRAD(Log, x.log(), (uniform<2>({3, 4}, 0.2, 3, 5)))
UNARY_GRAD(Log1p, x.log1p(), (uniform<2>({3, 4}, -0.5, 3, 6)))
UNARY_GRAD(Sqrt, x.sqrt(), (uniform<2>({3, 4}, 0.2, 3, 7)))
UNARY_GRAD(Sin, x.sin(), (uniform<2>({3, 4}, -3, 3, 8)))
UNARY_GRAD(Cos, x.cos(), (uniform<2>({3, 4}, -3, 3, 9)))
UNARY_GRAD(Tanh, x.tanh(), (uniform<2>({3, 4}, -2, 2, 10)))
UNARY_GRAD(Sigmoid, x.sigmoid(), (uniform<2>({3, 4}, -4, 4, 11)))
UNARY_GRAD(Erf, x.erf(), (uniform<2>({3, 4}, -2, 2, 12)))
UNARY_GRAD(Recip, x.recip(), (away_from_zero<2>({3, 4}, 0.3, 2, 13)))
UNARY_GRAD(Relu, x.relu(), (away_from_zero<2>({3, 4}, 0.1, 2, 14)))
UNARY_GRAD(Gelu, x.gelu(), (uniform<2>({3, 4}, -3, 3, 15)))
UNARY_GRAD(GeluTanh, x.gelu(true), (uniform<2>({3, 4}, -3, 3, 16)))
UNARY_GRAD(Sign, x.sign(), away_from_jumps(17))
UNARY_GRAD(Floor, x.floor(), away_from_jumps(18))
UNARY_GRAD(Ceil, x.ceil(), away_from_jumps(19))
UNARY_GRAD(Round, x.round(), away_from_jumps(20))
// Inverse trigonometric and hyperbolic ops inside their domains, away from the poles at +-1 (asin, acos, atanh)
// and 1 (acosh).
UNARY_GRAD(Asin, x.asin(), (uniform<2>({3, 4}, -0.9, 0.9, 24)))
UNARY_GRAD(Acos, x.acos(), (uniform<2>({3, 4}, -0.9, 0.9, 25)))
UNARY_GRAD(Atan, x.atan(), (uniform<2>({3, 4}, -3, 3, 26)))
UNARY_GRAD(Sinh, x.sinh(), (uniform<2>({3, 4}, -3, 3, 27)))
UNARY_GRAD(Cosh, x.cosh(), (uniform<2>({3, 4}, -3, 3, 28)))
UNARY_GRAD(Asinh, x.asinh(), (uniform<2>({3, 4}, -3, 3, 29)))
UNARY_GRAD(Acosh, x.acosh(), (uniform<2>({3, 4}, 1.2, 4, 44)))
UNARY_GRAD(Atanh, x.atanh(), (uniform<2>({3, 4}, -0.9, 0.9, 45)))
// Unary ops on a non-contiguous (transposed) input.
UNARY_GRAD(TanhOfTranspose, x.transpose().tanh(), (uniform<2>({3, 4}, -2, 2, 21)))
UNARY_GRAD(ChainExpLogSigmoid, x.exp().log1p().sigmoid().mul(x), (uniform<2>({3, 4}, -2, 2, 22)))

TEST(GradCheckUnary, PiecewiseConstantOpsHaveExactlyZeroGradient) {
  const auto x = away_from_jumps(23);
  EXPECT_TRUE(check_zero_grad([](const T<2>& t) { return t.sign(); }, x));
  EXPECT_TRUE(check_zero_grad([](const T<2>& t) { return t.floor(); }, x));
  EXPECT_TRUE(check_zero_grad([](const T<2>& t) { return t.ceil(); }, x));
  EXPECT_TRUE(check_zero_grad([](const T<2>& t) { return t.round(); }, x));
}

// ---------------------------------------------------------------- scalar
UNARY_GRAD(AddScalar, x.add_scalar(1.5), (uniform<2>({3, 4}, -2, 2, 30)))
UNARY_GRAD(SubScalar, x.sub_scalar(0.7), (uniform<2>({3, 4}, -2, 2, 31)))
UNARY_GRAD(MulScalar, x.mul_scalar(-2.5), (uniform<2>({3, 4}, -2, 2, 32)))
UNARY_GRAD(DivScalar, x.div_scalar(3.0), (uniform<2>({3, 4}, -2, 2, 33)))
UNARY_GRAD(RsubScalar, x.rsub_scalar(2.0), (uniform<2>({3, 4}, -2, 2, 34)))
UNARY_GRAD(RdivScalar, x.rdiv_scalar(2.0), (away_from_zero<2>({3, 4}, 0.3, 2, 35)))
UNARY_GRAD(ScalarOperators, 2.0 - x * 3.0 + 1.0 / x - x / 4.0 + 0.5 * x - 1.0, (away_from_zero<2>({3, 4}, 0.3, 2, 36)))
UNARY_GRAD(PowScalarInt, x.pow_scalar(3.0), (uniform<2>({3, 4}, -2, 2, 37)))
UNARY_GRAD(PowScalarFrac, x.pow_scalar(2.5), (uniform<2>({3, 4}, 0.2, 2, 38)))
UNARY_GRAD(PowScalarNeg, x.pow_scalar(-1.5), (uniform<2>({3, 4}, 0.3, 2, 39)))
UNARY_GRAD(PowScalarOne, x.pow_scalar(1.0), (uniform<2>({3, 4}, -2, 2, 40)))
UNARY_GRAD(PowScalarZero, x.pow_scalar(0.0), (uniform<2>({3, 4}, 0.2, 2, 41)))
UNARY_GRAD(ClampMin, x.clamp_min(0.0), (away_from_zero<2>({3, 4}, 0.1, 2, 42)))
UNARY_GRAD(ClampMax, x.clamp_max(0.5), (away_from_zero<2>({3, 4}, 0.1, 2, 43).add_scalar(0.5)))
// x / s = n +- f with f in [0.1, 0.4] (away_from_jumps scaled by s): away from remainder's jumps. d/dx = 1.
UNARY_GRAD(RemainderScalarNegative, x.remainder_scalar(-1.5), away_from_jumps(46).mul_scalar(-1.5))
UNARY_GRAD(RemainderScalarPositive, x.remainder_scalar(0.75), away_from_jumps(47).mul_scalar(0.75))
UNARY_GRAD(Clamp, x.clamp(-0.5, 0.5),
           (tensor<2>({-1.7, -0.9, -0.45, -0.2, 0.05, 0.3, 0.44, 0.6, 1.1, 1.8, -0.7, 0.8}, {3, 4})))

// ---------------------------------------------------------------- binary with broadcasting
#define BINARY_GRAD(NAME, EXPR, A, B)                                                         \
  TEST(GradCheckBinary, NAME) {                                                               \
    EXPECT_TRUE(check_grad([](const T<3>& a, const T<3>& b) { return EXPR; }, A, B));         \
  }

BINARY_GRAD(AddSameShape, a.add(b), (uniform<3>({2, 3, 4}, -2, 2, 50)), (uniform<3>({2, 3, 4}, -2, 2, 51)))
BINARY_GRAD(AddBroadcastRow, a + b, (uniform<3>({2, 3, 4}, -2, 2, 52)), (uniform<3>({1, 1, 4}, -2, 2, 53)))
BINARY_GRAD(AddBroadcastBoth, a.add(b), (uniform<3>({2, 1, 4}, -2, 2, 54)), (uniform<3>({1, 3, 1}, -2, 2, 55)))
BINARY_GRAD(SubBroadcast, a - b, (uniform<3>({2, 3, 1}, -2, 2, 56)), (uniform<3>({2, 1, 4}, -2, 2, 57)))
BINARY_GRAD(SubBroadcastLeft, a.sub(b), (uniform<3>({1, 3, 4}, -2, 2, 58)), (uniform<3>({2, 3, 4}, -2, 2, 59)))
BINARY_GRAD(MulSameShape, a * b, (uniform<3>({2, 3, 4}, -2, 2, 60)), (uniform<3>({2, 3, 4}, -2, 2, 61)))
BINARY_GRAD(MulBroadcast, a.mul(b), (uniform<3>({2, 1, 4}, -2, 2, 62)), (uniform<3>({1, 3, 1}, -2, 2, 63)))
BINARY_GRAD(DivSameShape, a / b, (uniform<3>({2, 3, 4}, -2, 2, 64)), (away_from_zero<3>({2, 3, 4}, 0.4, 2, 65)))
BINARY_GRAD(DivBroadcast, a.div(b), (uniform<3>({2, 3, 1}, -2, 2, 66)), (away_from_zero<3>({1, 3, 4}, 0.4, 2, 67)))
BINARY_GRAD(DivBroadcastScalarLike, a.div(b), (uniform<3>({2, 3, 4}, -2, 2, 68)),
            (away_from_zero<3>({1, 1, 1}, 0.4, 2, 69)))
BINARY_GRAD(PowSameShape, a.pow(b), (uniform<3>({2, 3, 4}, 0.3, 2, 70)), (uniform<3>({2, 3, 4}, -2, 2, 71)))
BINARY_GRAD(PowBroadcast, a.pow(b), (uniform<3>({2, 1, 4}, 0.3, 2, 72)), (uniform<3>({1, 3, 1}, -2, 2, 73)))
BINARY_GRAD(MaximumSameShape, a.maximum(b), (distinct_pair({2, 3, 4}, {2, 3, 4}, 74).first),
            (distinct_pair({2, 3, 4}, {2, 3, 4}, 74).second))
BINARY_GRAD(MaximumBroadcast, a.maximum(b), (distinct_pair({2, 3, 1}, {1, 3, 4}, 75).first),
            (distinct_pair({2, 3, 1}, {1, 3, 4}, 75).second))
BINARY_GRAD(MinimumSameShape, a.minimum(b), (distinct_pair({2, 3, 4}, {2, 3, 4}, 76).first),
            (distinct_pair({2, 3, 4}, {2, 3, 4}, 76).second))
BINARY_GRAD(MinimumBroadcast, a.minimum(b), (distinct_pair({1, 3, 4}, {2, 1, 4}, 77).first),
            (distinct_pair({1, 3, 4}, {2, 1, 4}, 77).second))
BINARY_GRAD(Composite, (a * b + a / (b * b + 1.0)).tanh() - a.pow(b.abs()), (uniform<3>({2, 3, 4}, 0.3, 2, 78)),
            (away_from_zero<3>({2, 1, 4}, 0.3, 2, 79)))
BINARY_GRAD(Atan2SameShape, a.atan2(b), (uniform<3>({2, 3, 4}, -2, 2, 81)), (away_from_zero<3>({2, 3, 4}, 0.3, 2, 82)))
BINARY_GRAD(Atan2Broadcast, a.atan2(b), (away_from_zero<3>({2, 1, 4}, 0.3, 2, 83)), (uniform<3>({1, 3, 1}, -2, 2, 84)))

// remainder: d/da = 1, d/db = -floor(a / b) (PyTorch's definition), checked where a / b = n +- f, f in [0.1, 0.4],
// so the finite differences never cross a jump; b has both signs and is broadcast.
TEST(GradCheckBinary, RemainderBroadcast) {
  const auto b = tensor<3>({1.5, -0.75, 2.0, -1.25}, {1, 1, 4});
  const auto q = tensor<3>(away_from_jumps(85).to_vec<double>(), {3, 1, 4});
  const auto a = q.mul(b);
  EXPECT_TRUE(check_grad([](const T<3>& x, const T<3>& y) { return x.remainder(y); }, a, b));
}

// The same tensor on both sides: its gradient is the sum of both contributions.
TEST(GradCheckBinary, SameInputBothSides) {
  const auto x = uniform<3>({2, 3, 4}, 0.3, 2, 80);
  EXPECT_TRUE(check_grad([](const T<3>& a) { return a.mul(a); }, x));
  EXPECT_TRUE(check_grad([](const T<3>& a) { return a.div(a.exp()); }, x));
  EXPECT_TRUE(check_grad([](const T<3>& a) { return a.pow(a); }, x));
  EXPECT_TRUE(check_grad([](const T<3>& a) { return a.sub(a.mul_scalar(3.0)); }, x));
}

// Exact tie-breaking semantics (not differentiable there, so checked against known values): ties share equally.
TEST(GradCheckBinary, MaximumTieSplitsGradientEvenly) {
  const auto a = tensor<1>({1.0, 2.0, 3.0}, {3}).require_grad();
  const auto b = tensor<1>({1.0, 5.0, 0.0}, {3}).require_grad();
  auto g = a.maximum(b).sum().backward();
  EXPECT_EQ(a.grad(g)->to_vec<double>(), (std::vector<double>{0.5, 0.0, 1.0}));
  EXPECT_EQ(b.grad(g)->to_vec<double>(), (std::vector<double>{0.5, 1.0, 0.0}));
}

// ---------------------------------------------------------------- reductions
#define REDUCE_GRAD(NAME, EXPR, INPUT)                                         \
  TEST(GradCheckReduce, NAME) {                                                \
    EXPECT_TRUE(check_grad([](const T<3>& x) { return EXPR; }, INPUT));        \
  }

REDUCE_GRAD(Sum, x.sum(), (uniform<3>({2, 3, 4}, -2, 2, 100)))
REDUCE_GRAD(Mean, x.mean(), (uniform<3>({2, 3, 4}, -2, 2, 101)))
REDUCE_GRAD(SumDim0, x.sum_dim(0), (uniform<3>({2, 3, 4}, -2, 2, 102)))
REDUCE_GRAD(SumDim1, x.sum_dim(1), (uniform<3>({2, 3, 4}, -2, 2, 103)))
REDUCE_GRAD(SumDimLast, x.sum_dim(-1), (uniform<3>({2, 3, 4}, -2, 2, 104)))
REDUCE_GRAD(MeanDim0, x.mean_dim(0), (uniform<3>({2, 3, 4}, -2, 2, 105)))
REDUCE_GRAD(MeanDim1, x.mean_dim(1), (uniform<3>({2, 3, 4}, -2, 2, 106)))
REDUCE_GRAD(MeanDim2, x.mean_dim(2), (uniform<3>({2, 3, 4}, -2, 2, 107)))
REDUCE_GRAD(SumOfTranspose, x.swap_dims(0, 2).sum_dim(1), (uniform<3>({2, 3, 4}, -2, 2, 108)))
REDUCE_GRAD(Prod, x.prod(), (away_from_zero<3>({2, 2, 3}, 0.6, 1.4, 109)))
REDUCE_GRAD(ProdDim0, x.prod_dim(0), (away_from_zero<3>({2, 3, 4}, 0.3, 2, 110)))
REDUCE_GRAD(ProdDim1, x.prod_dim(1), (away_from_zero<3>({2, 3, 4}, 0.3, 2, 111)))
REDUCE_GRAD(ProdDim2, x.prod_dim(2), (away_from_zero<3>({2, 3, 4}, 0.3, 2, 112)))
REDUCE_GRAD(Max, x.max(), (distinct<3>({2, 3, 4}, -2, 2, 113)))
REDUCE_GRAD(Min, x.min(), (distinct<3>({2, 3, 4}, -2, 2, 114)))
REDUCE_GRAD(MaxDim0, x.max_dim(0), (distinct<3>({2, 3, 4}, -2, 2, 115)))
REDUCE_GRAD(MaxDim1, x.max_dim(1), (distinct<3>({2, 3, 4}, -2, 2, 116)))
REDUCE_GRAD(MaxDim2, x.max_dim(2), (distinct<3>({2, 3, 4}, -2, 2, 117)))
REDUCE_GRAD(MinDim0, x.min_dim(0), (distinct<3>({2, 3, 4}, -2, 2, 118)))
REDUCE_GRAD(MinDim1, x.min_dim(1), (distinct<3>({2, 3, 4}, -2, 2, 119)))
REDUCE_GRAD(MinDim2, x.min_dim(-1), (distinct<3>({2, 3, 4}, -2, 2, 120)))
REDUCE_GRAD(MaxDimWithIndices, x.max_dim_with_indices(1).first, (distinct<3>({2, 3, 4}, -2, 2, 121)))
REDUCE_GRAD(MaxDimWithIndicesLast, x.max_dim_with_indices(2).first, (distinct<3>({2, 3, 4}, -2, 2, 122)))
REDUCE_GRAD(MinDimWithIndices, x.min_dim_with_indices(0).first, (distinct<3>({2, 3, 4}, -2, 2, 123)))
REDUCE_GRAD(VarDim0, x.var(0), (uniform<3>({3, 3, 4}, -2, 2, 124)))
REDUCE_GRAD(VarDim1, x.var(1), (uniform<3>({2, 3, 4}, -2, 2, 125)))
REDUCE_GRAD(VarDim2Biased, x.var(2, 0), (uniform<3>({2, 3, 4}, -2, 2, 126)))
REDUCE_GRAD(SoftmaxLast, x.softmax(-1), (uniform<3>({2, 3, 4}, -3, 3, 127)))
REDUCE_GRAD(SoftmaxDim0, x.softmax(0), (uniform<3>({2, 3, 4}, -3, 3, 128)))
REDUCE_GRAD(SoftmaxDim1, x.softmax(1), (uniform<3>({2, 3, 4}, -3, 3, 129)))
REDUCE_GRAD(LogSoftmaxLast, x.log_softmax(2), (uniform<3>({2, 3, 4}, -3, 3, 130)))
REDUCE_GRAD(LogSoftmaxDim1, x.log_softmax(1), (uniform<3>({2, 3, 4}, -3, 3, 131)))
REDUCE_GRAD(LogSoftmaxLargeLogits, x.log_softmax(-1), (uniform<3>({2, 3, 4}, 200, 210, 132)))
REDUCE_GRAD(CrossEntropyLike, x.log_softmax(-1).mean_dim(2).neg().mean(), (uniform<3>({2, 3, 4}, -3, 3, 133)))

// prod with zeros: d prod / d x_i is the product of the others, which the y / x_i shortcut cannot give.
TEST(GradCheckReduce, ProdWithOneZero) {
  const auto x = tensor<3>({0.7, -1.3, 0.0, 1.6, 0.9, -1.1, 1.2, 0.8, 1.5, -0.6, 1.1, 0.95}, {2, 2, 3});
  EXPECT_TRUE(check_grad([](const T<3>& t) { return t.prod(); }, x));
  // Known values too: only the zero gets a gradient, the product of the others.
  auto leaf = x.require_grad();
  auto g = leaf.grad(leaf.prod().backward())->to_vec<double>();
  double others = 1.0;
  for (double v : x.to_vec<double>())
    if (v != 0.0) others *= v;
  for (std::size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], i == 2 ? others : 0.0, 1e-12) << i;
}

TEST(GradCheckReduce, ProdWithTwoZeros) {
  const auto x = tensor<3>({0.7, -1.3, 0.0, 1.6, 0.9, -1.1, 1.2, 0.0, 1.5, -0.6, 1.1, 0.95}, {2, 2, 3});
  EXPECT_TRUE(check_grad([](const T<3>& t) { return t.prod(); }, x));
  auto leaf = x.require_grad();
  auto g = leaf.grad(leaf.prod().backward())->to_vec<double>();
  for (double v : g) EXPECT_EQ(v, 0.0);
}

TEST(GradCheckReduce, ProdDimWithZeroRows) {
  // Along dim 2 (rows of 3): row 0 has one zero, row 1 none, row 2 two zeros, row 3 all zeros.
  const auto x = tensor<3>({0.7, 0.0, 1.3, 1.6, 0.9, -1.1, 0.0, 0.8, 0.0, 0.0, 0.0, 0.0}, {2, 2, 3});
  EXPECT_TRUE(check_grad([](const T<3>& t) { return t.prod_dim(2); }, x));
  EXPECT_TRUE(check_grad([](const T<3>& t) { return t.prod_dim(1); }, x));
  EXPECT_TRUE(check_grad([](const T<3>& t) { return t.prod_dim(0); }, x));
}

TEST(GradCheckReduce, ProdWithNegativeValues) {
  EXPECT_TRUE(check_grad([](const T<3>& t) { return t.prod(); }, away_from_zero<3>({1, 2, 4}, 0.5, 1.5, 134)));
}

// Exact semantics at ties (not differentiable there): every element equal to the extreme shares the gradient.
TEST(GradCheckReduce, MaxTiesShareGradient) {
  const auto x = tensor<2>({1.0, 3.0, 3.0, 2.0, 5.0, 4.0}, {2, 3}).require_grad();
  auto g = x.max().backward();
  EXPECT_EQ(x.grad(g)->to_vec<double>(), (std::vector<double>{0, 0, 0, 0, 1, 0}));
  auto gd = x.max_dim(1).sum().backward();
  EXPECT_EQ(x.grad(gd)->to_vec<double>(), (std::vector<double>{0, 0.5, 0.5, 0, 1, 0}));
  // max_dim_with_indices routes the whole gradient to the one element at the returned index.
  auto [v, idx] = x.max_dim_with_indices(1);
  auto gi = v.sum().backward();
  auto gv = x.grad(gi)->to_vec<double>();
  auto iv = idx.to_vec<int64_t>();
  std::vector<double> want(6, 0.0);
  want[static_cast<std::size_t>(iv[0])] = 1.0;
  want[3 + static_cast<std::size_t>(iv[1])] = 1.0;
  EXPECT_EQ(gv, want);
}

}  // namespace elementwise_grads
}  // namespace ember::gradcheck

namespace ember::gradcheck {
namespace elementwise_grads {

// The checker itself must catch a wrong gradient: detaching one factor halves d(x*x)/dx, dropping a branch loses
// its contribution, and an untracked path is invisible to backward but not to finite differences.
TEST(GradCheckSelfTest, DetectsWrongGradients) {
  const auto x = uniform<2>({3, 4}, 0.5, 2, 900);
  EXPECT_FALSE(check_grad([](const T<2>& t) { return t.mul(t.detach()); }, x));
  EXPECT_FALSE(check_grad([](const T<2>& t) { return t.exp().add(t.detach().sin()); }, x));
  EXPECT_FALSE(check_grad([](const T<2>& t) { return t.max_dim(1).detach().add(t); }, x));
  const auto y = uniform<2>({1, 4}, 0.5, 2, 901);
  EXPECT_FALSE(check_grad([](const T<2>& a, const T<2>& b) { return a.mul(b.detach()).add(b.mul_scalar(0.0)); }, x, y));
  EXPECT_TRUE(check_grad([](const T<2>& a, const T<2>& b) { return a.mul(b); }, x, y));
}

}  // namespace elementwise_grads
}  // namespace ember::gradcheck
