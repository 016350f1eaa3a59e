// The composed (non-fused) formulas against closed forms computed here in double, independently of the engine:
// GELU-tanh's backward and softmax / log_softmax forward and backward. The CPU backend always takes its fused
// kernels, so the composed rules run on the CPU only through HideOptional<B> (tests/support/hide_optional.hpp); a
// GPU backend without the fused ops (Vulkan) runs exactly these. The fused CPU path is checked against the same
// closed forms, so both paths answer to one independent reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tests/support/hide_optional.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace {

template <class B>
class ComposedClosedForm : public ::testing::Test {
 protected:
  static constexpr bool kF64 = std::is_same_v<typename B::FloatElem, double>;
  // Largest |got - want| / max |want| allowed, ~3-4x the measured worst case. f64: rounding only (measured 2.5e-15,
  // softmax backward). f32 GELU-tanh: measured 3.05e-6 at x = +-4.875, where tanh(u) rounds to 1 in f32 and the
  // backward's 1 - t^2 cancels (on [-3, 3] it is 1.2e-7). f32 softmax / log_softmax: measured 6.5e-7 (softmax
  // backward). A wrong constant in a rule (3a -> 2a in GELU-tanh's inner derivative) moves the result by ~1e-3.
  static constexpr double kTolGelu = kF64 ? 1e-14 : 1e-5;
  static constexpr double kTolSoftmax = kF64 ? 1e-14 : 2e-6;
};
using ClosedFormBackends = ::testing::Types<Autodiff<Cpu<double>>, Autodiff<HideOptional<Cpu<double>>>,
                                            Autodiff<HideOptional<Cpu<float>>>>;
struct ClosedFormNames {
  template <class B>
  static std::string GetName(int) {
    if (std::is_same_v<B, Autodiff<Cpu<double>>>) return "FusedF64";
    return std::is_same_v<B, Autodiff<HideOptional<Cpu<double>>>> ? "ComposedF64" : "ComposedF32";
  }
};
TYPED_TEST_SUITE(ComposedClosedForm, ClosedFormBackends, ClosedFormNames);

// Max |got - want| relative to max |want|, so one tolerance serves values of any scale.
::testing::AssertionResult near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  double err = 0, scale = 0;
  std::size_t worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    scale = std::max(scale, std::abs(want[i]));
    if (!(std::abs(got[i] - want[i]) <= err)) {
      err = std::abs(got[i] - want[i]);
      worst = i;
    }
  }
  const double rel = err / std::max(scale, 1e-300);
  if (rel <= tol) return ::testing::AssertionSuccess() << "relative error " << rel;
  return ::testing::AssertionFailure() << "relative error " << rel << " > " << tol << " at element " << worst
                                       << ": got " << got[worst] << ", expected " << want[worst];
}

// Inputs exactly representable in f32, so the reference sees the values the f32 backend holds.
double as_f32(double v) { return static_cast<double>(static_cast<float>(v)); }

// The weights of L = sum(w * f(x)): the gradient is w * f'(x) for elementwise f, distinct per element.
std::vector<double> weights(std::size_t n) {
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) w[i] = (i % 2 ? -1.0 : 1.0) * (0.5 + static_cast<double>(i % 5) / 4.0);
  return w;
}

// GELU, tanh approximation: f(x) = 0.5 x (1 + tanh(u)), u = c (x + a x^3), c = sqrt(2 / pi), a = 0.044715;
// f'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2), t = tanh(u).
constexpr double kA = 0.044715;
double gelu_tanh(double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + kA * x * x * x))); }
double gelu_tanh_grad(double x) {
  const double c = std::sqrt(2 / M_PI), t = std::tanh(c * (x + kA * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * kA * x * x);
}

TEST(ClosedForm, GeluTanhDerivativeIsTheDerivative) {
  // The closed form above is itself right: central differences of f agree to ~1e-10 (step 1e-5: truncation h^2 f'''
  // ~ 1e-10, rounding 1e-16 / h ~ 1e-11).
  for (double x = -5; x <= 5; x += 0.125) {
    const double h = 1e-5, fd = (gelu_tanh(x + h) - gelu_tanh(x - h)) / (2 * h);
    EXPECT_NEAR(gelu_tanh_grad(x), fd, 1e-9) << "x = " << x;
  }
}

TYPED_TEST(ComposedClosedForm, GeluTanhForwardAndBackward) {
  using B = TypeParam;
  // x in [-5, 5] step 0.125 (81 values): both tails, the kink region, x = 0.
  std::vector<double> xs;
  for (int i = -40; i <= 40; ++i) xs.push_back(i * 0.125);
  const auto w = weights(xs.size());
  std::vector<double> want_y, want_g;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    want_y.push_back(gelu_tanh(xs[i]));
    want_g.push_back(w[i] * gelu_tanh_grad(xs[i]));
  }
  const auto x = Tensor<B, 1>::from_values(xs, {static_cast<int64_t>(xs.size())}).require_grad();
  const auto y = x.gelu(true);
  const auto grads = y.mul(Tensor<B, 1>::from_values(w, {static_cast<int64_t>(w.size())})).sum().backward();
  EXPECT_TRUE(near(values(y), want_y, this->kTolGelu));
  ASSERT_TRUE(x.grad(grads).has_value());
  EXPECT_TRUE(near(values(*x.grad(grads)), want_g, this->kTolGelu));
}

TYPED_TEST(ComposedClosedForm, SoftmaxAndLogSoftmaxForwardAndBackward) {
  using B = TypeParam;
  // 4 rows of 6 logits in [-6, 6] (one row shifted by +40 to need the max subtraction), softmax over dim 1.
  const int64_t rows = 4, cols = 6;
  std::vector<double> xs;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      xs.push_back(as_f32(std::sin(1.7 * static_cast<double>(r * cols + c)) * 6 + (r == 2 ? 40 : 0)));
  const auto w = weights(xs.size());
  // y_i = e^(x_i - m) / s, s = sum_j e^(x_j - m);  d/dx_i sum_k w_k y_k = y_i (w_i - sum_k w_k y_k).
  // log_softmax_i = x_i - m - log s;               d/dx_i sum_k w_k ls_k = w_i - y_i sum_k w_k.
  std::vector<double> want_sm(xs.size()), want_ls(xs.size()), want_g_sm(xs.size()), want_g_ls(xs.size());
  for (int64_t r = 0; r < rows; ++r) {
    const auto row = [&](int64_t c) { return static_cast<std::size_t>(r * cols + c); };
    double m = xs[row(0)], s = 0, wy = 0, wsum = 0;
    for (int64_t c = 1; c < cols; ++c) m = std::max(m, xs[row(c)]);
    for (int64_t c = 0; c < cols; ++c) s += std::exp(xs[row(c)] - m);
    for (int64_t c = 0; c < cols; ++c) {
      want_sm[row(c)] = std::exp(xs[row(c)] - m) / s;
      want_ls[row(c)] = xs[row(c)] - m - std::log(s);
      wy += w[row(c)] * want_sm[row(c)];
      wsum += w[row(c)];
    }
    for (int64_t c = 0; c < cols; ++c) {
      want_g_sm[row(c)] = want_sm[row(c)] * (w[row(c)] - wy);
      want_g_ls[row(c)] = w[row(c)] - want_sm[row(c)] * wsum;
    }
  }
  const auto wt = Tensor<B, 2>::from_values(w, {rows, cols});
  {
    SCOPED_TRACE("softmax");
    const auto x = Tensor<B, 2>::from_values(xs, {rows, cols}).require_grad();
    const auto y = x.softmax(1);
    const auto grads = y.mul(wt).sum().backward();
    EXPECT_TRUE(near(values(y), want_sm, this->kTolSoftmax));
    ASSERT_TRUE(x.grad(grads).has_value());
    EXPECT_TRUE(near(values(*x.grad(grads)), want_g_sm, this->kTolSoftmax));
  }
  {
    SCOPED_TRACE("log_softmax");
    const auto x = Tensor<B, 2>::from_values(xs, {rows, cols}).require_grad();
    const auto y = x.log_softmax(1);
    const auto grads = y.mul(wt).sum().backward();
    EXPECT_TRUE(near(values(y), want_ls, this->kTolSoftmax));
    ASSERT_TRUE(x.grad(grads).has_value());
    EXPECT_TRUE(near(values(*x.grad(grads)), want_g_ls, this->kTolSoftmax));
  }
}

}  // namespace
}  // namespace ember::test
