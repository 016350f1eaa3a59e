// Module ops (conv2d, conv1d, max/avg/adaptive pooling) against reference values computed independently with
// NumPy/SciPy: tests/reference/gen_module_reference.py writes tests/reference/module_reference.hpp.
#include <array>
#include <optional>
#include <span>
#include <vector>

#include "tests/reference/module_reference.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace module_ops_cases {

template <class B>
class ModuleOps : public ::testing::Test {};
TYPED_TEST_SUITE(ModuleOps, TestBackends, BackendNames);

// Sums of products: inputs are exact in f32, so the only error is the accumulation order.
template <class B>
constexpr double kSumTol = Tol<B>::f64 ? 1e-12 : 1e-5;

std::vector<double> vec(std::span<const double> s) { return {s.begin(), s.end()}; }
std::vector<double> vec(std::span<const int64_t> s) { return {s.begin(), s.end()}; }
template <std::size_t D>
Shape shape_of(const std::array<int64_t, D>& a) {
  return Shape(std::vector<int64_t>(a.begin(), a.end()));
}

// Inputs are marked require_grad so that the Autodiff backend runs its recording path (a no-op elsewhere).
template <class B, std::size_t D>
Tensor<B, D> input(std::span<const double> v, const std::array<int64_t, D>& shape) {
  return make<B, D>(vec(v), shape).require_grad();
}

template <class B, std::size_t N>
std::optional<Tensor<B, 1>> bias_of(const int64_t (&opts)[N], std::span<const double> b) {
  if (!opts[N - 1]) return std::nullopt;
  return input<B, 1>(b, std::array<int64_t, 1>{static_cast<int64_t>(b.size())});
}

template <class B>
::testing::AssertionResult run_conv2d(std::span<const double> x, const std::array<int64_t, 4>& xs,
                                      std::span<const double> w, const std::array<int64_t, 4>& ws,
                                      const int64_t (&opts)[8], std::span<const double> b, std::span<const double> y,
                                      const std::array<int64_t, 4>& ys) {
  Conv2dOptions o;
  o.stride = {opts[0], opts[1]};
  o.padding = {opts[2], opts[3]};
  o.dilation = {opts[4], opts[5]};
  o.groups = opts[6];
  const auto out = conv2d<B>(input<B, 4>(x, xs), input<B, 4>(w, ws), bias_of<B>(opts, b), o);
  return matches(out, shape_of(ys), vec(y), kSumTol<B>);
}

// Expands to the arguments of run_conv2d for reference case `name` (the bias span is empty without bias).
#define EMBER_CONV2D_REF(name)                                                                                  \
  ref::conv2d_##name##_x, ref::conv2d_##name##_x_shape, ref::conv2d_##name##_w, ref::conv2d_##name##_w_shape, \
      ref::conv2d_##name##_opts
#define EMBER_CONV2D_OUT(name) ref::conv2d_##name##_y, ref::conv2d_##name##_y_shape

// ------------------------------------------------------------------------------------------------- conv2d
TYPED_TEST(ModuleOps, Conv2dBasicBatch2WithBias) {
  EXPECT_TRUE(run_conv2d<TypeParam>(EMBER_CONV2D_REF(basic), ref::conv2d_basic_b, EMBER_CONV2D_OUT(basic)));
}
TYPED_TEST(ModuleOps, Conv2dStridePaddingNonSquareKernelNoBias) {
  EXPECT_TRUE(run_conv2d<TypeParam>(EMBER_CONV2D_REF(stride_pad), {}, EMBER_CONV2D_OUT(stride_pad)));
}
TYPED_TEST(ModuleOps, Conv2dDilation) {
  EXPECT_TRUE(run_conv2d<TypeParam>(EMBER_CONV2D_REF(dilation), ref::conv2d_dilation_b, EMBER_CONV2D_OUT(dilation)));
}
TYPED_TEST(ModuleOps, Conv2dGroups) {
  EXPECT_TRUE(run_conv2d<TypeParam>(EMBER_CONV2D_REF(groups), ref::conv2d_groups_b, EMBER_CONV2D_OUT(groups)));
}
TYPED_TEST(ModuleOps, Conv2dDepthwiseChannelMultiplierStride2) {
  EXPECT_TRUE(run_conv2d<TypeParam>(EMBER_CONV2D_REF(depthwise), {}, EMBER_CONV2D_OUT(depthwise)));
}
TYPED_TEST(ModuleOps, Conv2dDepthwisePure) {
  EXPECT_TRUE(run_conv2d<TypeParam>(EMBER_CONV2D_REF(depthwise_pure), ref::conv2d_depthwise_pure_b,
                                    EMBER_CONV2D_OUT(depthwise_pure)));
}
TYPED_TEST(ModuleOps, Conv2dPointwise1x1) {
  EXPECT_TRUE(
      run_conv2d<TypeParam>(EMBER_CONV2D_REF(pointwise), ref::conv2d_pointwise_b, EMBER_CONV2D_OUT(pointwise)));
}
TYPED_TEST(ModuleOps, Conv2dPointwise1x1Stride2) {
  EXPECT_TRUE(run_conv2d<TypeParam>(EMBER_CONV2D_REF(pointwise_stride), {}, EMBER_CONV2D_OUT(pointwise_stride)));
}
TYPED_TEST(ModuleOps, Conv2dSingleImagePadded) {
  EXPECT_TRUE(run_conv2d<TypeParam>(EMBER_CONV2D_REF(single_image), ref::conv2d_single_image_b,
                                    EMBER_CONV2D_OUT(single_image)));
}
TYPED_TEST(ModuleOps, Conv2dStridePaddingDilationGroupsTogether) {
  EXPECT_TRUE(run_conv2d<TypeParam>(EMBER_CONV2D_REF(all_options), ref::conv2d_all_options_b,
                                    EMBER_CONV2D_OUT(all_options)));
}
TYPED_TEST(ModuleOps, Conv2dMediumBatch4) {
  EXPECT_TRUE(run_conv2d<TypeParam>(EMBER_CONV2D_REF(medium), ref::conv2d_medium_b, EMBER_CONV2D_OUT(medium)));
}
// Bias adds the same value to every output pixel of its channel: with and without bias differ by exactly that.
TYPED_TEST(ModuleOps, Conv2dBiasIsPerChannelOffset) {
  using B = TypeParam;
  const auto x = input<B, 4>(ref::conv2d_groups_x, ref::conv2d_groups_x_shape);
  const auto w = input<B, 4>(ref::conv2d_groups_w, ref::conv2d_groups_w_shape);
  const auto b = input<B, 1>(ref::conv2d_groups_b, std::array<int64_t, 1>{ref::conv2d_groups_w_shape[0]});
  Conv2dOptions o;
  o.padding = {1, 1};
  o.groups = 2;
  const auto diff = conv2d<B>(x, w, b, o).sub(conv2d<B>(x, w, std::nullopt, o));
  const auto want = b.reshape(std::array<int64_t, 4>{1, ref::conv2d_groups_w_shape[0], 1, 1})
                        .template expand<4>(ref::conv2d_groups_y_shape);
  EXPECT_TRUE(matches(diff, shape_of(ref::conv2d_groups_y_shape), values(want), kSumTol<B>));
}
#undef EMBER_CONV2D_REF
#undef EMBER_CONV2D_OUT

// ------------------------------------------------------------------------------------------------- conv1d
template <class B>
::testing::AssertionResult run_conv1d(std::span<const double> x, const std::array<int64_t, 3>& xs,
                                      std::span<const double> w, const std::array<int64_t, 3>& ws,
                                      const int64_t (&opts)[5], std::span<const double> b, std::span<const double> y,
                                      const std::array<int64_t, 3>& ys) {
  Conv1dOptions o;
  o.stride = opts[0];
  o.padding = opts[1];
  o.dilation = opts[2];
  o.groups = opts[3];
  const auto out = conv1d<B>(input<B, 3>(x, xs), input<B, 3>(w, ws), bias_of<B>(opts, b), o);
  return matches(out, shape_of(ys), vec(y), kSumTol<B>);
}
#define EMBER_CONV1D_REF(name)                                                                                  \
  ref::conv1d_##name##_x, ref::conv1d_##name##_x_shape, ref::conv1d_##name##_w, ref::conv1d_##name##_w_shape, \
      ref::conv1d_##name##_opts
#define EMBER_CONV1D_OUT(name) ref::conv1d_##name##_y, ref::conv1d_##name##_y_shape

TYPED_TEST(ModuleOps, Conv1dBasic) {
  EXPECT_TRUE(run_conv1d<TypeParam>(EMBER_CONV1D_REF(basic), ref::conv1d_basic_b, EMBER_CONV1D_OUT(basic)));
}
TYPED_TEST(ModuleOps, Conv1dStridePaddingDilationGroups) {
  EXPECT_TRUE(
      run_conv1d<TypeParam>(EMBER_CONV1D_REF(all_options), ref::conv1d_all_options_b, EMBER_CONV1D_OUT(all_options)));
}
TYPED_TEST(ModuleOps, Conv1dDepthwiseNoBias) {
  EXPECT_TRUE(run_conv1d<TypeParam>(EMBER_CONV1D_REF(depthwise), {}, EMBER_CONV1D_OUT(depthwise)));
}
#undef EMBER_CONV1D_REF
#undef EMBER_CONV1D_OUT

// ------------------------------------------------------------------------------------------------- max_pool2d
Pool2dOptions max_opts(const int64_t (&o)[8]) {
  Pool2dOptions p;
  p.kernel = {o[0], o[1]};
  p.stride = {o[2], o[3]};
  p.padding = {o[4], o[5]};
  p.dilation = {o[6], o[7]};
  return p;
}

// Checks max_pool2d and max_pool2d_with_indices (values and flat H*W indices) for one reference case.
template <class B>
void check_max_pool(std::span<const double> x, const std::array<int64_t, 4>& xs, const int64_t (&opts)[8],
                    std::span<const double> y, std::span<const int64_t> idx, const std::array<int64_t, 4>& ys) {
  const auto in = input<B, 4>(x, xs);
  const Pool2dOptions o = max_opts(opts);
  // A max selects one input exactly: no rounding at all.
  EXPECT_TRUE(matches(max_pool2d<B>(in, o), shape_of(ys), vec(y), 0.0));
  const auto [out, indices] = max_pool2d_with_indices<B>(in, o);
  EXPECT_TRUE(matches(out, shape_of(ys), vec(y), 0.0));
  EXPECT_TRUE(matches(indices, shape_of(ys), vec(idx), 0.0));
}
#define EMBER_MAX_POOL_REF(name)                                                                    \
  ref::max_pool2d_##name##_x, ref::max_pool2d_##name##_x_shape, ref::max_pool2d_##name##_opts,      \
      ref::max_pool2d_##name##_y, ref::max_pool2d_##name##_idx, ref::max_pool2d_##name##_y_shape

TYPED_TEST(ModuleOps, MaxPool2dBasicWithIndices) { check_max_pool<TypeParam>(EMBER_MAX_POOL_REF(basic)); }
TYPED_TEST(ModuleOps, MaxPool2dOverlappingWindowsWithIndices) {
  check_max_pool<TypeParam>(EMBER_MAX_POOL_REF(overlap));
}
TYPED_TEST(ModuleOps, MaxPool2dPaddingIsNegativeInfinity) {
  check_max_pool<TypeParam>(EMBER_MAX_POOL_REF(padding));
}
TYPED_TEST(ModuleOps, MaxPool2dDilationWithIndices) { check_max_pool<TypeParam>(EMBER_MAX_POOL_REF(dilation)); }
#undef EMBER_MAX_POOL_REF

// ------------------------------------------------------------------------------------------------- avg_pool2d
template <class B>
void check_avg_pool(std::span<const double> x, const std::array<int64_t, 4>& xs, const int64_t (&opts)[6],
                    bool count_include_pad, std::span<const double> y, const std::array<int64_t, 4>& ys) {
  Pool2dOptions o;
  o.kernel = {opts[0], opts[1]};
  o.stride = {opts[2], opts[3]};
  o.padding = {opts[4], opts[5]};
  o.count_include_pad = count_include_pad;
  EXPECT_TRUE(matches(avg_pool2d<B>(input<B, 4>(x, xs), o), shape_of(ys), vec(y), kSumTol<B>));
}
#define EMBER_AVG_POOL_REF(name, flag, which)                                                              \
  ref::avg_pool2d_##name##_x, ref::avg_pool2d_##name##_x_shape, ref::avg_pool2d_##name##_opts, flag,       \
      ref::avg_pool2d_##name##_y_##which, ref::avg_pool2d_##name##_y_shape

TYPED_TEST(ModuleOps, AvgPool2dBasic) {
  check_avg_pool<TypeParam>(EMBER_AVG_POOL_REF(basic, true, include_pad));
  check_avg_pool<TypeParam>(EMBER_AVG_POOL_REF(basic, false, exclude_pad));
}
TYPED_TEST(ModuleOps, AvgPool2dPaddingCountIncludePad) {
  check_avg_pool<TypeParam>(EMBER_AVG_POOL_REF(pad, true, include_pad));
}
TYPED_TEST(ModuleOps, AvgPool2dPaddingCountExcludePad) {
  check_avg_pool<TypeParam>(EMBER_AVG_POOL_REF(pad, false, exclude_pad));
}
TYPED_TEST(ModuleOps, AvgPool2dRectKernelCountIncludePad) {
  check_avg_pool<TypeParam>(EMBER_AVG_POOL_REF(rect_pad, true, include_pad));
}
TYPED_TEST(ModuleOps, AvgPool2dRectKernelCountExcludePad) {
  check_avg_pool<TypeParam>(EMBER_AVG_POOL_REF(rect_pad, false, exclude_pad));
}
#undef EMBER_AVG_POOL_REF

// ------------------------------------------------------------------------------------------------- adaptive_avg_pool2d
template <class B>
void check_adaptive(std::span<const double> x, const std::array<int64_t, 4>& xs, std::span<const double> y,
                    const std::array<int64_t, 4>& ys) {
  const auto out = adaptive_avg_pool2d<B>(input<B, 4>(x, xs), {ys[2], ys[3]});
  EXPECT_TRUE(matches(out, shape_of(ys), vec(y), kSumTol<B>));
}
#define EMBER_ADAPTIVE_REF(name) \
  ref::adaptive_##name##_x, ref::adaptive_##name##_x_shape, ref::adaptive_##name##_y, ref::adaptive_##name##_y_shape

TYPED_TEST(ModuleOps, AdaptiveAvgPool2dDownDivisible) { check_adaptive<TypeParam>(EMBER_ADAPTIVE_REF(down_divisible)); }
TYPED_TEST(ModuleOps, AdaptiveAvgPool2dDownNonDivisible) { check_adaptive<TypeParam>(EMBER_ADAPTIVE_REF(down_uneven)); }
TYPED_TEST(ModuleOps, AdaptiveAvgPool2dUpsample) { check_adaptive<TypeParam>(EMBER_ADAPTIVE_REF(up)); }
TYPED_TEST(ModuleOps, AdaptiveAvgPool2dGlobal) { check_adaptive<TypeParam>(EMBER_ADAPTIVE_REF(global)); }
TYPED_TEST(ModuleOps, AdaptiveAvgPool2dUpAndDownMixed) { check_adaptive<TypeParam>(EMBER_ADAPTIVE_REF(mixed)); }
#undef EMBER_ADAPTIVE_REF

}  // namespace module_ops_cases
}  // namespace ember::test
