// The CPU's fused linear (optional_ops.hpp HasFusedLinearAct, backends/cpu/linear.cpp): oneDNN's matmul with the
// weight read in place and bias + ReLU as post-ops, and the OpenBLAS path with its bias rows and ReLU pass (oneDNN
// turned off), each against the composed default (permute + matmul + add + relu) computed in f64. Shapes on both
// sides of onednn_linear.cpp's choice (one row, 10 output columns), rows split over two threads, empty problems;
// and matmul's transposed products through oneDNN's strided operands.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "backends/cpu/onednn.hpp"
#include "backends/cpu/parallel.hpp"
#include "tests/support/hide_optional.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace {

static_assert(optional_ops::HasFusedLinearAct<Cpu<float>> && optional_ops::HasFusedLinearAct<Cpu<double>>);
static_assert(!optional_ops::HasFusedLinearAct<HideOptional<Cpu<double>>>);

using F = Cpu<float>;
using Ref = HideOptional<Cpu<double>>;

std::vector<double> uniform(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = u(gen);
  return v;
}

template <class C>
typename C::FloatPrimitive make(const std::vector<double>& v, Shape s) {
  return C::template from_data<Float>(TensorData::from_vec<double>(v, s).convert(DType::F64), typename C::Device{});
}

std::vector<double> vec_of(const TensorData& d) { return d.convert(DType::F64).to_vec<double>(); }

struct Case {
  int64_t m, k, n;
};

// Runs every trans_w / bias / relu combination of one shape through F's fused op and compares with Ref's default.
void check(const Case& c, const char* path) {
  const auto xv = uniform(c.m * c.k, 1), wv = uniform(c.k * c.n, 2), bv = uniform(c.n, 3);
  for (bool trans_w : {false, true}) {
    const Shape ws = trans_w ? Shape{c.n, c.k} : Shape{c.k, c.n};
    for (bool with_bias : {false, true}) {
      for (LinearActivation act : {LinearActivation::None, LinearActivation::Relu}) {
        const auto xf = make<F>(xv, Shape{c.m, c.k}), wf = make<F>(wv, ws), bf = make<F>(bv, Shape{c.n});
        const auto xr = make<Ref>(xv, Shape{c.m, c.k}), wr = make<Ref>(wv, ws), br = make<Ref>(bv, Shape{c.n});
        const auto got = F::float_linear_act(xf, wf, with_bias ? &bf : nullptr, trans_w, act);
        const auto want =
            optional_ops::composed::float_linear_act<Ref>(xr, wr, with_bias ? &br : nullptr, trans_w, act);
        ASSERT_EQ(F::shape<Float>(got), (Shape{c.m, c.n}));
        const auto g = vec_of(F::into_data<Float>(got)), w = vec_of(Ref::into_data<Float>(want));
        double worst = 0;
        for (std::size_t i = 0; i < g.size(); ++i)
          worst = std::max(worst, std::abs(g[i] - w[i]) / (1 + std::abs(w[i])));
        EXPECT_LT(worst, 1e-5) << path << " m " << c.m << " k " << c.k << " n " << c.n << " trans_w " << trans_w
                               << " bias " << with_bias << " relu " << (act == LinearActivation::Relu);
      }
    }
  }
}

const std::vector<Case> kCases = {
    {1, 16, 70},    // one row: OpenBLAS's gemv
    {9, 16, 70},    // oneDNN's smallest problem
    {64, 64, 256},  // the digits MLP's first layer at batch 64
    {64, 96, 10},   // the logits: OpenBLAS's small-matrix kernel
    {256, 128, 128},  // large enough to split the rows over two threads
    {0, 16, 70},    // empty
};

TEST(CpuLinearPaths, OneDnnAndBlasMatchTheComposedDefault) {
  const int threads = cpu::num_threads();
  cpu::set_num_threads(2);
  for (bool onednn : {true, false}) {
    const bool before = cpu::onednn::enabled();
    cpu::onednn::set_enabled(onednn);
    for (const Case& c : kCases) check(c, onednn ? "onednn" : "blas");
    cpu::onednn::set_enabled(before);
  }
  cpu::set_num_threads(threads);
}

// matmul.cpp's single-GEMM products through oneDNN (transposed operands read in place through strides, batch dims
// folded into A's rows) against OpenBLAS's (oneDNN off), and against the f64 product.
TEST(CpuLinearPaths, MatmulTransposedOneDnnMatchesBlas) {
  struct MCase {
    Shape a, b;
    bool ta, tb;
  };
  const std::vector<MCase> cases = {
      {{64, 256}, {256, 96}, false, false}, {{256, 64}, {256, 96}, true, false}, {{64, 256}, {96, 256}, false, true},
      {{256, 64}, {96, 256}, true, true},   {{2, 32, 64}, {1, 64, 128}, false, false},  // batch folded into rows
      {{64, 10}, {10, 256}, false, false},  // k = 10: the logits' backward
  };
  for (const MCase& c : cases) {
    const auto av = uniform(c.a.num_elements(), 4), bv = uniform(c.b.num_elements(), 5);
    const auto af = make<F>(av, c.a), bf = make<F>(bv, c.b);
    const auto ar = make<Ref>(av, c.a), br = make<Ref>(bv, c.b);
    const auto want = vec_of(
        Ref::into_data<Float>(optional_ops::composed::float_matmul_transposed<Ref>(ar, br, c.ta, c.tb)));
    for (bool onednn : {true, false}) {
      const bool before = cpu::onednn::enabled();
      cpu::onednn::set_enabled(onednn);
      const auto got = vec_of(F::into_data<Float>(F::float_matmul_transposed(af, bf, c.ta, c.tb)));
      cpu::onednn::set_enabled(before);
      ASSERT_EQ(got.size(), want.size());
      double worst = 0;
      for (std::size_t i = 0; i < got.size(); ++i)
        worst = std::max(worst, std::abs(got[i] - want[i]) / (1 + std::abs(want[i])));
      EXPECT_LT(worst, 1e-5) << (onednn ? "onednn " : "blas ") << c.a.to_string() << " " << c.b.to_string() << " ta "
                             << c.ta << " tb " << c.tb;
    }
  }
}

// Autodiff's float_linear_act: the inner fused op and no node under NoGrad or when no operand requires grad, one
// recorded node (the same values) when one does.
TEST(CpuLinearPaths, AutodiffRecordsOnlyWhenAGradientIsWanted) {
  using A = Autodiff<F>;
  static_assert(optional_ops::HasFusedLinearAct<A>);
  const Case c{16, 32, 80};
  const auto x = A::from_inner(make<F>(uniform(c.m * c.k, 6), Shape{c.m, c.k}));
  const auto plain_w = A::from_inner(make<F>(uniform(c.n * c.k, 7), Shape{c.n, c.k}));
  const auto w = A::float_require_grad(plain_w, true);
  const auto recorded = A::float_linear_act(x, w, nullptr, true, LinearActivation::Relu);
  EXPECT_TRUE(A::float_is_require_grad(recorded));
  EXPECT_FALSE(A::float_is_require_grad(A::float_linear_act(x, plain_w, nullptr, true, LinearActivation::Relu)));
  typename A::FloatPrimitive fused;
  {
    const autodiff::NoGrad no_grad;
    fused = A::float_linear_act(x, w, nullptr, true, LinearActivation::Relu);
  }
  EXPECT_FALSE(A::float_is_require_grad(fused));
  const auto a = vec_of(F::into_data<Float>(A::inner(recorded))), b = vec_of(F::into_data<Float>(A::inner(fused)));
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-5 * (1 + std::abs(a[i])));
}

// Autodiff's one node for act(x @ op(w) + bias): its gradients for x, w and bias equal those of the same function
// recorded as separate ops (the weight's permute, float_linear, the ReLU: optional_ops' composed default), for both
// weight layouts, with and without bias and ReLU. The loss weights the output by a random seed, so that each
// gradient entry is distinct; about half of the pre-activations are negative, so the ReLU's step matters.
TEST(CpuLinearPaths, AutodiffNodeGradientsMatchTheComposedOps) {
  using A = Autodiff<F>;
  using T2 = Tensor<A, 2>;
  using T1 = Tensor<A, 1>;
  const Case c{12, 24, 70};
  const T2 seed(A::from_inner(make<F>(uniform(c.m * c.n, 14), Shape{c.m, c.n})));
  for (bool trans_w : {false, true}) {
    for (LinearActivation act : {LinearActivation::None, LinearActivation::Relu}) {
      for (bool with_bias : {false, true}) {
        const T2 x = T2(A::from_inner(make<F>(uniform(c.m * c.k, 11), Shape{c.m, c.k}))).require_grad();
        const Shape ws = trans_w ? Shape{c.n, c.k} : Shape{c.k, c.n};
        const T2 w = T2(A::from_inner(make<F>(uniform(c.n * c.k, 12), ws))).require_grad();
        const T1 b = T1(A::from_inner(make<F>(uniform(c.n, 13), Shape{c.n}))).require_grad();
        const auto* bp = with_bias ? &b.primitive() : nullptr;
        const T2 node(A::float_linear_act(x.primitive(), w.primitive(), bp, trans_w, act));
        const T2 ops(optional_ops::composed::float_linear_act<A>(x.primitive(), w.primitive(), bp, trans_w, act));
        const auto gn = node.mul(seed).sum().backward(), go = ops.mul(seed).sum().backward();
        const auto near = [&](const auto& a, const auto& b, const char* what) {
          const auto va = vec_of(a.into_data()), vb = vec_of(b.into_data());
          ASSERT_EQ(va.size(), vb.size()) << what;
          for (std::size_t i = 0; i < va.size(); ++i)
            ASSERT_NEAR(va[i], vb[i], 1e-5 * (1 + std::abs(vb[i])))
                << what << " [" << i << "], trans_w " << trans_w << ", relu " << (act == LinearActivation::Relu)
                << ", bias " << with_bias;
        };
        near(node.detach(), ops.detach(), "output");
        near(*x.grad(gn), *x.grad(go), "grad x");
        near(*w.grad(gn), *w.grad(go), "grad w");
        if (with_bias) near(*b.grad(gn), *b.grad(go), "grad bias");
        else EXPECT_FALSE(b.grad(gn).has_value());
      }
    }
  }
}

// NaN passes through the BLAS path's ReLU as through the ReLU op (max(0, NaN) is NaN in PyTorch).
TEST(CpuLinearPaths, BlasReluKeepsNan) {
  const bool before = cpu::onednn::enabled();
  cpu::onednn::set_enabled(false);
  const auto x = make<F>({std::nan(""), 1.0}, Shape{1, 2}), w = make<F>({1.0, 1.0, -1.0, 2.0}, Shape{2, 2});
  const auto y = vec_of(F::into_data<Float>(F::float_linear_act(x, w, nullptr, false, LinearActivation::Relu)));
  cpu::onednn::set_enabled(before);
  ASSERT_EQ(y.size(), 2u);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_TRUE(std::isnan(y[1]));
}

}  // namespace
}  // namespace ember::test
