// Backward kernels at the geometries the default cases never reach: conv2d with stride, dilation, groups and
// asymmetric padding (its input/weight/bias gradients: col2im, the grouped gemms, the bias reduction), max pooling
// with overlapping and dilated windows and padding (several windows pick the same input), average pooling with
// overlapping windows with and without the padding counted (count_include_pad = false divides by the window's
// in-bounds size), and adaptive pooling whose windows overlap. Every gradient is compared with
// Autodiff<Cpu<double>>'s (itself checked against finite differences in tests/grad), on each autodiff backend of
// the op suite: the CPU's here, Vulkan's in op_suite_vulkan.
#include <array>
#include <tuple>
#include <vector>

#include "tests/support/grad_agreement.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace backward_geometry_cases {

// Distinct values in [lo, hi) (a permutation of an even grid, so max pooling never sees a tie).
template <std::size_t D>
In<D> spread(std::array<int64_t, D> shape, double lo, double hi, uint64_t salt) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<double> v(static_cast<std::size_t>(n));
  const uint64_t step = 7919;  // prime, so i * step mod n is a permutation whenever n is not a multiple of it
  for (std::size_t i = 0; i < v.size(); ++i) {
    const uint64_t k = (i * step + salt) % static_cast<uint64_t>(n);
    v[i] = lo + (hi - lo) * (static_cast<double>(k) + 0.5) / static_cast<double>(n);
  }
  return {v, shape};
}

// Two negative weights to one positive, uneven magnitudes: sums over many outputs (bias gradients) do not cancel.
double mostly_negative_weight(std::size_t i) {
  return (i % 3 ? -0.5 : 1.0) * (0.25 + static_cast<double>(i % 11) / 11.0);
}

template <class B>
class BackwardGeometry : public ::testing::Test {
 protected:
  void SetUp() override {
    if constexpr (!AutodiffBackend<B>) GTEST_SKIP() << "plain backend: no gradients to compare";
  }
  // Normalized error of these f32 gradients against f64, measured: 3.6e-8 .. 1.24e-7 on lavapipe (conv2d with
  // groups the largest); 1e-6 is 8x that. A wrong index, divisor or missing overlap contribution is off by >= 1e-2.
  // The conv cases take gemm_tol(kTol): f16's bound where the f16 GEMM runs (op_suite_vulkan_f16); pooling keeps kTol.
  static constexpr double kTol = std::is_same_v<typename B::FloatElem, double> ? 1e-12 : 1e-6;
};
TYPED_TEST_SUITE(BackwardGeometry, TestBackends, BackendNames);

TYPED_TEST(BackwardGeometry, Conv2dStrideDilationGroupsAsymmetricPadding) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& x, const auto& w, const auto& b) {
      using B = typename std::decay_t<decltype(x)>::Backend_;
      Conv2dOptions o;
      o.stride = {2, 1};
      o.padding = {1, 2};
      o.dilation = {2, 1};
      o.groups = 2;
      return conv2d<B>(x, w, b, o);  // [2, 6, 4, 10]
    };
    EXPECT_TRUE(agrees_weighted<TypeParam>(mostly_negative_weight,
                                           gemm_tol<TypeParam>(this->kTol), f, spread<4>({2, 4, 9, 8}, -1.0, 1.0, 1),
                                       spread<4>({6, 2, 3, 3}, -0.5, 0.5, 2), spread<1>({6}, -0.1, 0.1, 3)));
  }
}

TYPED_TEST(BackwardGeometry, Conv2dDepthwiseStridedWindowsThatSkipInputs) {
  if constexpr (AutodiffBackend<TypeParam>) {
    // Stride 3 with a 2-wide kernel skips every third column: those inputs must get exactly zero gradient.
    auto f = [](const auto& x, const auto& w, const auto& b) {
      using B = typename std::decay_t<decltype(x)>::Backend_;
      Conv2dOptions o;
      o.stride = {1, 3};
      o.groups = 3;
      return conv2d<B>(x, w, b, o);
    };
    EXPECT_TRUE(agrees_weighted<TypeParam>(mostly_negative_weight,
                                           gemm_tol<TypeParam>(this->kTol), f, spread<4>({1, 3, 5, 10}, -1.0, 1.0, 4),
                                       spread<4>({6, 1, 2, 2}, -0.5, 0.5, 5), spread<1>({6}, -0.1, 0.1, 6)));
  }
}

TYPED_TEST(BackwardGeometry, Conv1dStrideDilationPadding) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& x, const auto& w, const auto& b) {
      using B = typename std::decay_t<decltype(x)>::Backend_;
      return conv1d<B>(x, w, b, Conv1dOptions{2, 2, 3, 1});  // stride 2, padding 2, dilation 3
    };
    EXPECT_TRUE(agrees_weighted<TypeParam>(mostly_negative_weight,
                                           gemm_tol<TypeParam>(this->kTol), f, spread<3>({2, 3, 17}, -1.0, 1.0, 7),
                                       spread<3>({4, 3, 3}, -0.5, 0.5, 8), spread<1>({4}, -0.1, 0.1, 9)));
  }
}

TYPED_TEST(BackwardGeometry, MaxPoolOverlappingDilatedPaddedWindows) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& x) {
      using B = typename std::decay_t<decltype(x)>::Backend_;
      Pool2dOptions overlap;  // 3x3 windows at stride 1: each input is in up to 9 windows
      overlap.kernel = {3, 3};
      overlap.stride = {1, 1};
      overlap.padding = {1, 1};
      Pool2dOptions dilated;
      dilated.kernel = {2, 3};
      dilated.stride = {2, 1};
      dilated.padding = {1, 0};
      dilated.dilation = {2, 2};
      return max_pool2d<B>(x, overlap).sum_dim(3).add(max_pool2d<B>(x, dilated).sum_dim(3).sum_dim(2));
    };
    EXPECT_TRUE(agrees_weighted<TypeParam>(mostly_negative_weight,
                                           this->kTol, f, spread<4>({2, 3, 7, 8}, -1.0, 1.0, 10)));
  }
}

TYPED_TEST(BackwardGeometry, AvgPoolOverlappingWindowsWithAndWithoutPadCounted) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& x) {
      using B = typename std::decay_t<decltype(x)>::Backend_;
      Pool2dOptions o;
      o.kernel = {3, 3};
      o.stride = {2, 2};
      o.padding = {1, 1};
      o.count_include_pad = false;  // border windows divide by their in-bounds count (4 or 6), not 9
      const auto excl = avg_pool2d<B>(x, o);
      o.count_include_pad = true;
      o.kernel = {3, 2};
      o.stride = {1, 2};
      o.padding = {1, 1};
      const auto incl = avg_pool2d<B>(x, o);
      return excl.sum_dim(3).sum_dim(2).add(incl.sum_dim(3).sum_dim(2).mul_scalar(0.5));
    };
    EXPECT_TRUE(agrees_weighted<TypeParam>(mostly_negative_weight,
                                           this->kTol, f, spread<4>({2, 3, 7, 9}, -1.0, 1.0, 11)));
  }
}

TYPED_TEST(BackwardGeometry, AvgPoolExcludePadAlone) {
  if constexpr (AutodiffBackend<TypeParam>) {
    // Each output separately weighted: a divisor wrong at one border window shows in its inputs' gradients.
    auto f = [](const auto& x) {
      using B = typename std::decay_t<decltype(x)>::Backend_;
      Pool2dOptions o;
      o.kernel = {2, 3};
      o.stride = {1, 1};
      o.padding = {1, 1};
      o.count_include_pad = false;
      return avg_pool2d<B>(x, o);
    };
    EXPECT_TRUE(agrees_weighted<TypeParam>(mostly_negative_weight,
                                           this->kTol, f, spread<4>({1, 2, 5, 6}, -1.0, 1.0, 12)));
  }
}

TYPED_TEST(BackwardGeometry, AdaptiveAvgPoolOverlappingWindows) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& x) {
      using B = typename std::decay_t<decltype(x)>::Backend_;
      return adaptive_avg_pool2d<B>(x, {3, 4});  // 7 -> 3 and 5 -> 4: neighbouring windows share inputs
    };
    EXPECT_TRUE(agrees_weighted<TypeParam>(mostly_negative_weight,
                                           this->kTol, f, spread<4>({2, 2, 7, 5}, -1.0, 1.0, 13)));
  }
}

}  // namespace backward_geometry_cases
}  // namespace ember::test
