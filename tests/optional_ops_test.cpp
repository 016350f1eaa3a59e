// The optional backend ops (engine/backend/optional_ops.hpp): HideOptional hides them all, the CPU backend provides
// them all, each of the CPU backend's fused ops agrees with its composed default, and the dispatchers pick the
// backend's op when present and the default otherwise.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "tests/support/hide_optional.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace {

using F = Cpu<float>;
using Hidden = HideOptional<F>;
using FP = F::FloatPrimitive;

// The composed paths only run under HideOptional if it really hides every optional op: an optional op that the
// wrapper lets through (or that HasAnyOptionalOp forgets) fails here or in the comparisons below.
static_assert(Backend<Hidden> && Backend<HideOptional<Cpu<double>>>);
static_assert(AutodiffBackend<Autodiff<Hidden>>);
static_assert(!optional_ops::HasAnyOptionalOp<Hidden>);
static_assert(!optional_ops::HasFusedUnaryBackward<Hidden> && !optional_ops::HasMatmulTransposed<Hidden> &&
              !optional_ops::HasFusedAdamStep<Hidden> && !optional_ops::HasSelect<Hidden>);
// ... and the comparisons compare something: the CPU backend provides each op.
static_assert(optional_ops::HasFusedUnaryBackward<F> && optional_ops::HasMatmulTransposed<F> &&
              optional_ops::HasFusedAdamStep<F> && optional_ops::HasSelect<F>);
static_assert(optional_ops::HasAnyOptionalOp<F>);

std::vector<double> random_values(std::size_t n, double lo, double hi, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> v(n);
  for (auto& x : v) x = lo + (hi - lo) * rng.uniform();
  return v;
}

template <std::size_t D>
FP prim(const std::vector<double>& v, std::array<int64_t, D> shape) {
  return Tensor<F, D>::from_values(v, shape).primitive();
}
template <std::size_t D>
FP random_prim(std::array<int64_t, D> shape, double lo, double hi, uint64_t seed) {
  std::size_t n = 1;
  for (auto d : shape) n *= static_cast<std::size_t>(d);
  return prim<D>(random_values(n, lo, hi, seed), shape);
}

std::vector<double> vals(const FP& p) { return F::into_data<Float>(p).to_vec<double>(); }

// Bit-for-bit the same values, NaN where the other has NaN (sqrt's and log's backward outside their domain).
::testing::AssertionResult same(const FP& got, const FP& want) { return close(vals(got), vals(want), 0.0); }

TEST(OptionalOps, FusedUnaryBackwardMatchesComposed) {
  // Every UnaryOp; the backend fuses some of them and returns nullopt for the rest.
  const UnaryOp ops[] = {UnaryOp::Neg,  UnaryOp::Abs,     UnaryOp::Exp,  UnaryOp::Log,   UnaryOp::Log1p,
                         UnaryOp::Sqrt, UnaryOp::Sin,     UnaryOp::Cos,  UnaryOp::Tanh,  UnaryOp::Sigmoid,
                         UnaryOp::Erf,  UnaryOp::Recip,   UnaryOp::Sign, UnaryOp::Floor, UnaryOp::Ceil,
                         UnaryOp::Round, UnaryOp::Relu,   UnaryOp::Gelu, UnaryOp::GeluTanh};
  // Inputs inside every op's domain, none at relu's kink: |x| in [0.05, 3] with both signs.
  std::vector<double> xv = random_values(64, 0.05, 3.0, 7);
  for (std::size_t i = 0; i < xv.size(); i += 2) xv[i] = -xv[i] / 3;  // negative ones in [-1, -0.016]: log1p's domain
  const FP x = prim<2>(xv, {8, 8});
  const FP g = random_prim<2>({8, 8}, -1.5, 1.5, 8);
  int fused_ops = 0;
  for (UnaryOp op : ops) {
    SCOPED_TRACE(::testing::Message() << "UnaryOp " << static_cast<int>(op));
    const FP y = F::float_unary(x, op);
    const FP composed = optional_ops::composed::float_unary_backward<F>(op, x, y, g);
    // Under the wrapper the dispatcher composes, whatever the op.
    EXPECT_TRUE(same(optional_ops::float_unary_backward<Hidden>(op, x, y, g), composed));
    auto fused = F::float_unary_backward(op, x, y, g);
    if (!fused) continue;
    ++fused_ops;
    EXPECT_TRUE(close(vals(*fused), vals(composed), Tol<F>::loose));
    EXPECT_TRUE(same(optional_ops::float_unary_backward<F>(op, x, y, g), *fused));
  }
  EXPECT_GE(fused_ops, 1) << "the CPU backend fused no unary backward: nothing was compared";
}

TEST(OptionalOps, MatmulTransposedMatchesComposed) {
  // a: [2, 3, 4] (or its transpose [2, 4, 3]) times b: [1, 4, 5] (or [1, 5, 4]): batch dims broadcast too.
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "trans_a " << ta << ", trans_b " << tb);
      const FP a = random_prim<3>({2, ta ? 4 : 3, ta ? 3 : 4}, -1, 1, 11);
      const FP b = random_prim<3>({1, tb ? 5 : 4, tb ? 4 : 5}, -1, 1, 12);
      const FP composed = optional_ops::composed::float_matmul_transposed<F>(a, b, ta, tb);
      ASSERT_EQ(F::shape<Float>(composed), Shape({2, 3, 5}));
      const FP fused = F::float_matmul_transposed(a, b, ta, tb);
      ASSERT_EQ(F::shape<Float>(fused), Shape({2, 3, 5}));
      EXPECT_TRUE(close(vals(fused), vals(composed), Tol<F>::exact));
      EXPECT_TRUE(same(optional_ops::float_matmul_transposed<F>(a, b, ta, tb), fused));
      EXPECT_TRUE(same(optional_ops::float_matmul_transposed<Hidden>(a, b, ta, tb), composed));
    }
  }
}

TEST(OptionalOps, FusedAdamStepMatchesComposed) {
  const FP w = random_prim<1>({37}, -2, 2, 21), g = random_prim<1>({37}, -1, 1, 22);
  const FP m = random_prim<1>({37}, -0.5, 0.5, 23), v = random_prim<1>({37}, 0.0, 0.05, 24);
  struct Case {
    const char* name;
    double weight_decay;
    bool decoupled;
    double t;  // the step count, for the bias corrections
  };
  for (const Case& c : {Case{"adam", 0.0, false, 3}, Case{"adam_l2", 0.1, false, 5}, Case{"adamw", 0.1, true, 2}}) {
    const AdamStepArgs a{0.01, 0.9, 0.999, 1e-8, c.weight_decay, c.decoupled, 1 - std::pow(0.9, c.t),
                         1 - std::pow(0.999, c.t)};
    for (bool first : {true, false}) {  // the first step has no moments yet
      SCOPED_TRACE(::testing::Message() << c.name << (first ? ", first step" : ", later step"));
      const FP* pm = first ? nullptr : &m;
      const FP* pv = first ? nullptr : &v;
      const auto composed = optional_ops::composed::float_adam_step<F>(w, g, pm, pv, a);
      const auto fused = F::float_adam_step(w, g, pm, pv, a);
      EXPECT_TRUE(close(vals(fused.param), vals(composed.param), Tol<F>::exact));
      EXPECT_TRUE(close(vals(fused.exp_avg), vals(composed.exp_avg), Tol<F>::exact));
      EXPECT_TRUE(close(vals(fused.exp_avg_sq), vals(composed.exp_avg_sq), Tol<F>::exact));
      EXPECT_TRUE(same(optional_ops::float_adam_step<F>(w, g, pm, pv, a).param, fused.param));
      EXPECT_TRUE(same(optional_ops::float_adam_step<Hidden>(w, g, pm, pv, a).param, composed.param));
    }
  }
}

TEST(OptionalOps, SelectMatchesComposed) {
  // Every dim and index of a [3, 4, 5] tensor: the CPU's one-step select (a view for dim 0, a copy otherwise), the
  // composed slice + reshape, and the dispatcher under the wrapper give the same shape and values.
  const FP x = random_prim<3>({3, 4, 5}, -2.0, 2.0, 11);
  const Shape xs = F::shape<Float>(x);
  int compared = 0;
  for (std::size_t dim = 0; dim < 3; ++dim) {
    for (int64_t i = 0; i < xs[dim]; ++i) {
      SCOPED_TRACE(::testing::Message() << "dim " << dim << " index " << i);
      Shape to = xs;
      to.dims.erase(to.dims.begin() + static_cast<std::ptrdiff_t>(dim));
      const FP composed = optional_ops::composed::select<F, Float>(x, dim, i, to);
      const FP own = F::select<Float>(x, dim, i, to);
      EXPECT_EQ(F::shape<Float>(own), to);
      EXPECT_EQ(F::shape<Float>(composed), to);
      EXPECT_TRUE(same(own, composed));
      EXPECT_TRUE(same(optional_ops::select<Hidden, Float>(x, dim, i, to), composed));
      ++compared;
    }
  }
  EXPECT_EQ(compared, 3 + 4 + 5);
}

}  // namespace
}  // namespace ember::test
