// The optimizer update op (optional_ops.hpp float_adam_step) on every backend: the CPU's and Vulkan's one-pass
// kernels, CUDA's, and Fusion's forwarding. Against a double reference of adam.hpp's formulas, and bit for bit
// against the composed default (the ~12 elementwise ops it replaces, which round each product and quotient on its
// own: the kernels keep that order and contract nothing). Adam's first step (no moments), a later step with
// moments, L2 weight decay and AdamW's decoupled decay; 1000 elements (several workgroups on a GPU).
#include <cmath>
#include <vector>

#include "engine/backend/optional_ops.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace optim_ops_cases {

template <class B>
class OptimOps : public ::testing::Test {};
TYPED_TEST_SUITE(OptimOps, TestBackends, BackendNames);

// The backend whose primitives the update takes (Autodiff's optimizers step the inner backend's tensors).
template <class B>
struct Stepped {
  using type = B;
};
template <class B>
struct Stepped<Autodiff<B>> {
  using type = B;
};

constexpr int64_t kN = 1000;
std::vector<double> wave(double a, double f, double shift) {
  std::vector<double> v(kN);
  for (int64_t i = 0; i < kN; ++i) v[i] = a * std::sin(f * static_cast<double>(i) + 0.3) + shift;
  return v;
}

struct Case {
  const char* name;
  double wd;
  bool decoupled, first;
  int t;
};

TYPED_TEST(OptimOps, AdamStepMatchesReferenceAndComposedBits) {
  using B = typename Stepped<TypeParam>::type;
  const std::vector<double> w = wave(0.5, 0.37, 0.0), g = wave(0.02, 1.3, 0.001), m = wave(0.01, 0.7, 0.0),
                            v = wave(1e-4, 0.9, 2e-4);
  for (const Case& c : {Case{"adam first step", 0.0, false, true, 1}, Case{"adam", 0.0, false, false, 3},
                        Case{"adam l2", 0.1, false, false, 5}, Case{"adamw", 0.1, true, false, 2}}) {
    SCOPED_TRACE(c.name);
    const AdamStepArgs a{0.01, 0.9, 0.999, 1e-8, c.wd, c.decoupled, 1 - std::pow(0.9, c.t), 1 - std::pow(0.999, c.t)};
    // adam.hpp's formulas in double.
    std::vector<double> rw(kN), rm(kN), rv(kN);
    for (int64_t i = 0; i < kN; ++i) {
      double wi = w[i], gi = g[i];
      if (c.wd != 0) {
        if (c.decoupled) wi *= 1 - a.lr * c.wd;
        else gi += c.wd * wi;
      }
      rm[i] = c.first ? (1 - a.beta1) * gi : a.beta1 * m[i] + (1 - a.beta1) * gi;
      rv[i] = c.first ? (1 - a.beta2) * gi * gi : a.beta2 * v[i] + (1 - a.beta2) * gi * gi;
      rw[i] = wi - a.lr / a.bias_correction1 * rm[i] / (std::sqrt(rv[i]) / std::sqrt(a.bias_correction2) + a.eps);
    }
    const auto tw = make<B, 1>(w, {kN}), tg = make<B, 1>(g, {kN}), tm = make<B, 1>(m, {kN}), tv = make<B, 1>(v, {kN});
    const auto* pm = c.first ? nullptr : &tm.primitive();
    const auto* pv = c.first ? nullptr : &tv.primitive();
    const auto fused = optional_ops::float_adam_step<B>(tw.primitive(), tg.primitive(), pm, pv, a);
    const Tensor<B, 1> fw(fused.param), fm(fused.exp_avg), fv(fused.exp_avg_sq);
    EXPECT_TRUE(matches(fw, Shape{kN}, rw, Tol<B>::exact));
    EXPECT_TRUE(matches(fm, Shape{kN}, rm, Tol<B>::exact));
    EXPECT_TRUE(matches(fv, Shape{kN}, rv, Tol<B>::exact));
    const auto composed = optional_ops::composed::float_adam_step<B>(tw.primitive(), tg.primitive(), pm, pv, a);
    EXPECT_EQ(values(fw), values(Tensor<B, 1>(composed.param)));
    EXPECT_EQ(values(fm), values(Tensor<B, 1>(composed.exp_avg)));
    EXPECT_EQ(values(fv), values(Tensor<B, 1>(composed.exp_avg_sq)));
  }
}

}  // namespace optim_ops_cases
}  // namespace ember::test
