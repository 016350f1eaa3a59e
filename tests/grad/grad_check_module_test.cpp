// Finite-difference gradient checks (f64) for matmul and the module ops: conv2d (stride, padding, dilation,
// groups, with and without bias; input, weight and bias gradients), conv1d, max_pool2d, avg_pool2d (padding
// counted and not), adaptive_avg_pool2d.
#include <gtest/gtest.h>

#include "tests/grad/grad_check.hpp"

namespace ember::gradcheck {
namespace module_grads {

// ---------------------------------------------------------------- matmul
TEST(GradCheckMatmul, TwoD) {
  EXPECT_TRUE(check_grad([](const T<2>& a, const T<2>& b) { return a.matmul(b); }, uniform<2>({3, 4}, -1, 1, 1),
                         uniform<2>({4, 5}, -1, 1, 2)));
  EXPECT_TRUE(check_grad([](const T<2>& a, const T<2>& b) { return a.matmul(b).tanh(); },
                         uniform<2>({1, 4}, -1, 1, 3), uniform<2>({4, 1}, -1, 1, 4)));
}

TEST(GradCheckMatmul, TransposedOperands) {
  EXPECT_TRUE(check_grad([](const T<2>& a, const T<2>& b) { return a.transpose().matmul(b.transpose()); },
                         uniform<2>({4, 3}, -1, 1, 5), uniform<2>({5, 4}, -1, 1, 6)));
  // The same matrix on both sides: x^T x.
  EXPECT_TRUE(check_grad([](const T<2>& a) { return a.transpose().matmul(a); }, uniform<2>({4, 3}, -1, 1, 7)));
}

TEST(GradCheckMatmul, Batched) {
  EXPECT_TRUE(check_grad([](const T<3>& a, const T<3>& b) { return a.matmul(b); }, uniform<3>({2, 3, 4}, -1, 1, 8),
                         uniform<3>({2, 4, 5}, -1, 1, 9)));
  EXPECT_TRUE(check_grad([](const T<4>& a, const T<4>& b) { return a.matmul(b).sin(); },
                         uniform<4>({2, 2, 3, 2}, -1, 1, 10), uniform<4>({2, 2, 2, 3}, -1, 1, 11)));
}

TEST(GradCheckMatmul, BatchBroadcast) {
  // b shared across the batch: its gradient sums over the batch.
  EXPECT_TRUE(check_grad([](const T<3>& a, const T<3>& b) { return a.matmul(b); }, uniform<3>({3, 2, 4}, -1, 1, 12),
                         uniform<3>({1, 4, 5}, -1, 1, 13)));
  EXPECT_TRUE(check_grad([](const T<3>& a, const T<3>& b) { return a.matmul(b); }, uniform<3>({1, 2, 4}, -1, 1, 14),
                         uniform<3>({3, 4, 5}, -1, 1, 15)));
  // Both broadcast, in different dims.
  EXPECT_TRUE(check_grad([](const T<4>& a, const T<4>& b) { return a.matmul(b).exp(); },
                         uniform<4>({2, 1, 3, 4}, -1, 1, 16), uniform<4>({1, 3, 4, 2}, -1, 1, 17)));
}

TEST(GradCheckMatmul, LinearLayerWithBias) {
  EXPECT_TRUE(check_grad([](const T<2>& x, const T<2>& w, const T<2>& b) { return x.matmul(w).add(b).tanh(); },
                         uniform<2>({5, 3}, -1, 1, 18), uniform<2>({3, 4}, -1, 1, 19), uniform<2>({1, 4}, -1, 1, 20)));
}

// ---------------------------------------------------------------- conv2d
Conv2dOptions conv_opts(std::array<int64_t, 2> stride, std::array<int64_t, 2> padding,
                        std::array<int64_t, 2> dilation, int64_t groups) {
  Conv2dOptions o;
  o.stride = stride;
  o.padding = padding;
  o.dilation = dilation;
  o.groups = groups;
  return o;
}

// Checks input, weight and bias gradients of one conv2d configuration (and the same without bias).
::testing::AssertionResult check_conv2d(std::array<int64_t, 4> xs, std::array<int64_t, 4> ws, const Conv2dOptions& o,
                                        uint64_t seed) {
  const auto x = uniform<4>(xs, -1, 1, seed);
  const auto w = uniform<4>(ws, -1, 1, seed + 1);
  const auto b = uniform<1>({ws[0]}, -1, 1, seed + 2);
  auto with_bias = check_grad(
      [o](const T<4>& xx, const T<4>& ww, const T<1>& bb) { return conv2d<AD>(xx, ww, std::optional<T<1>>(bb), o); },
      x, w, b);
  if (!with_bias) return with_bias << " (with bias)";
  auto without = check_grad([o](const T<4>& xx, const T<4>& ww) { return conv2d<AD>(xx, ww, std::nullopt, o); }, x, w);
  if (!without) return without << " (without bias)";
  return ::testing::AssertionSuccess();
}

TEST(GradCheckConv2d, Basic) { EXPECT_TRUE(check_conv2d({2, 3, 5, 5}, {4, 3, 3, 3}, conv_opts({1, 1}, {0, 0}, {1, 1}, 1), 30)); }
TEST(GradCheckConv2d, Stride) { EXPECT_TRUE(check_conv2d({2, 2, 7, 6}, {3, 2, 3, 2}, conv_opts({2, 3}, {0, 0}, {1, 1}, 1), 33)); }
TEST(GradCheckConv2d, Padding) { EXPECT_TRUE(check_conv2d({1, 2, 4, 5}, {3, 2, 3, 3}, conv_opts({1, 1}, {1, 2}, {1, 1}, 1), 36)); }
TEST(GradCheckConv2d, Dilation) { EXPECT_TRUE(check_conv2d({1, 2, 7, 7}, {2, 2, 3, 2}, conv_opts({1, 1}, {0, 0}, {2, 3}, 1), 39)); }
TEST(GradCheckConv2d, Groups) { EXPECT_TRUE(check_conv2d({2, 4, 5, 5}, {6, 2, 3, 3}, conv_opts({1, 1}, {1, 1}, {1, 1}, 2), 42)); }
TEST(GradCheckConv2d, Depthwise) { EXPECT_TRUE(check_conv2d({1, 3, 5, 4}, {3, 1, 2, 2}, conv_opts({1, 1}, {0, 1}, {1, 1}, 3), 45)); }
TEST(GradCheckConv2d, OneByOne) { EXPECT_TRUE(check_conv2d({2, 3, 4, 4}, {5, 3, 1, 1}, conv_opts({1, 1}, {0, 0}, {1, 1}, 1), 48)); }
TEST(GradCheckConv2d, Everything) {
  // Stride, padding, dilation and groups together, with strides that leave input rows unused.
  EXPECT_TRUE(check_conv2d({2, 4, 8, 7}, {4, 2, 3, 2}, conv_opts({2, 2}, {1, 2}, {2, 1}, 2), 51));
}

TEST(GradCheckConv2d, InsideANetwork) {
  // conv -> relu-free nonlinearity -> conv, on a permuted (non-contiguous) input.
  const auto x = uniform<4>({2, 5, 4, 3}, -1, 1, 54);
  const auto w1 = uniform<4>({4, 3, 3, 3}, -1, 1, 55);
  const auto w2 = uniform<4>({2, 4, 2, 2}, -1, 1, 56);
  EXPECT_TRUE(check_grad(
      [](const T<4>& xx, const T<4>& a, const T<4>& b) {
        auto h = conv2d<AD>(xx.permute({0, 3, 1, 2}), a, std::nullopt, conv_opts({1, 1}, {1, 1}, {1, 1}, 1)).tanh();
        return conv2d<AD>(h, b, std::nullopt, conv_opts({2, 1}, {0, 0}, {1, 1}, 1));
      },
      x, w1, w2));
}

// ---------------------------------------------------------------- conv1d
::testing::AssertionResult check_conv1d(std::array<int64_t, 3> xs, std::array<int64_t, 3> ws, Conv1dOptions o,
                                        uint64_t seed) {
  const auto x = uniform<3>(xs, -1, 1, seed);
  const auto w = uniform<3>(ws, -1, 1, seed + 1);
  const auto b = uniform<1>({ws[0]}, -1, 1, seed + 2);
  auto with_bias = check_grad(
      [o](const T<3>& xx, const T<3>& ww, const T<1>& bb) { return conv1d<AD>(xx, ww, std::optional<T<1>>(bb), o); },
      x, w, b);
  if (!with_bias) return with_bias << " (with bias)";
  auto without = check_grad([o](const T<3>& xx, const T<3>& ww) { return conv1d<AD>(xx, ww, std::nullopt, o); }, x, w);
  if (!without) return without << " (without bias)";
  return ::testing::AssertionSuccess();
}

TEST(GradCheckConv1d, Basic) { EXPECT_TRUE(check_conv1d({2, 3, 8}, {4, 3, 3}, {}, 60)); }
TEST(GradCheckConv1d, StridePaddingDilation) {
  EXPECT_TRUE(check_conv1d({2, 2, 9}, {3, 2, 3}, {.stride = 2, .padding = 2, .dilation = 2, .groups = 1}, 63));
}
TEST(GradCheckConv1d, Groups) {
  EXPECT_TRUE(check_conv1d({1, 4, 7}, {4, 2, 2}, {.stride = 1, .padding = 1, .dilation = 1, .groups = 2}, 66));
}

// ---------------------------------------------------------------- pooling
Pool2dOptions pool_opts(std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride, std::array<int64_t, 2> padding,
                        std::array<int64_t, 2> dilation = {1, 1}, bool count_include_pad = true) {
  Pool2dOptions o;
  o.kernel = kernel;
  o.stride = stride;
  o.padding = padding;
  o.dilation = dilation;
  o.count_include_pad = count_include_pad;
  return o;
}

// Distinct values: every window has a unique maximum that eps cannot change.
TEST(GradCheckMaxPool2d, NonOverlapping) {
  const auto o = pool_opts({2, 2}, {2, 2}, {0, 0});
  EXPECT_TRUE(check_grad([o](const T<4>& x) { return max_pool2d<AD>(x, o); }, distinct<4>({2, 2, 4, 6}, -3, 3, 70)));
}
TEST(GradCheckMaxPool2d, OverlappingWindows) {
  // Stride 1: an element that wins several windows accumulates their gradients.
  const auto o = pool_opts({3, 2}, {1, 1}, {0, 0});
  EXPECT_TRUE(check_grad([o](const T<4>& x) { return max_pool2d<AD>(x, o); }, distinct<4>({1, 2, 5, 5}, -3, 3, 71)));
}
TEST(GradCheckMaxPool2d, Padding) {
  const auto o = pool_opts({3, 3}, {2, 2}, {1, 1});
  EXPECT_TRUE(check_grad([o](const T<4>& x) { return max_pool2d<AD>(x, o); }, distinct<4>({2, 1, 5, 6}, -3, -0.5, 72)));
}
TEST(GradCheckMaxPool2d, Dilation) {
  const auto o = pool_opts({2, 2}, {1, 2}, {1, 0}, {2, 2});
  EXPECT_TRUE(check_grad([o](const T<4>& x) { return max_pool2d<AD>(x, o); }, distinct<4>({1, 2, 6, 7}, -3, 3, 73)));
}
TEST(GradCheckMaxPool2d, WithIndicesAndNonlinearity) {
  const auto o = pool_opts({2, 3}, {2, 1}, {0, 1});
  EXPECT_TRUE(check_grad([o](const T<4>& x) { return max_pool2d_with_indices<AD>(x.exp(), o).first.sin(); },
                         distinct<4>({1, 2, 4, 5}, -1, 1, 74)));
}

TEST(GradCheckAvgPool2d, NonOverlapping) {
  const auto o = pool_opts({2, 2}, {2, 2}, {0, 0});
  EXPECT_TRUE(check_grad([o](const T<4>& x) { return avg_pool2d<AD>(x, o); }, uniform<4>({2, 2, 4, 6}, -1, 1, 80)));
}
TEST(GradCheckAvgPool2d, OverlappingWindows) {
  const auto o = pool_opts({3, 2}, {1, 2}, {0, 0});
  EXPECT_TRUE(check_grad([o](const T<4>& x) { return avg_pool2d<AD>(x, o).exp(); }, uniform<4>({1, 2, 5, 6}, -1, 1, 81)));
}
TEST(GradCheckAvgPool2d, PaddingCountIncludePad) {
  const auto o = pool_opts({3, 3}, {2, 2}, {1, 1}, {1, 1}, true);
  EXPECT_TRUE(check_grad([o](const T<4>& x) { return avg_pool2d<AD>(x, o); }, uniform<4>({2, 2, 5, 6}, -1, 1, 82)));
}
TEST(GradCheckAvgPool2d, PaddingExcludePad) {
  const auto o = pool_opts({3, 3}, {2, 2}, {1, 1}, {1, 1}, false);
  EXPECT_TRUE(check_grad([o](const T<4>& x) { return avg_pool2d<AD>(x, o); }, uniform<4>({2, 2, 5, 6}, -1, 1, 83)));
}
TEST(GradCheckAvgPool2d, AsymmetricExcludePad) {
  const auto o = pool_opts({2, 3}, {1, 2}, {1, 1}, {1, 1}, false);
  EXPECT_TRUE(check_grad([o](const T<4>& x) { return avg_pool2d<AD>(x, o).sin(); }, uniform<4>({1, 3, 4, 5}, -1, 1, 84)));
  const auto oi = pool_opts({2, 3}, {1, 2}, {1, 1}, {1, 1}, true);
  EXPECT_TRUE(check_grad([oi](const T<4>& x) { return avg_pool2d<AD>(x, oi).sin(); }, uniform<4>({1, 3, 4, 5}, -1, 1, 85)));
}

TEST(GradCheckAdaptiveAvgPool2d, Divisible) {
  EXPECT_TRUE(check_grad([](const T<4>& x) { return adaptive_avg_pool2d<AD>(x, {2, 3}); },
                         uniform<4>({2, 2, 4, 6}, -1, 1, 90)));
}
TEST(GradCheckAdaptiveAvgPool2d, NonDivisibleOverlapping) {
  // 5 -> 3 and 7 -> 4: windows of different sizes that overlap.
  EXPECT_TRUE(check_grad([](const T<4>& x) { return adaptive_avg_pool2d<AD>(x, {3, 4}).exp(); },
                         uniform<4>({1, 2, 5, 7}, -1, 1, 91)));
}
TEST(GradCheckAdaptiveAvgPool2d, GlobalAndUpsampling) {
  EXPECT_TRUE(check_grad([](const T<4>& x) { return adaptive_avg_pool2d<AD>(x, {1, 1}); },
                         uniform<4>({2, 3, 3, 4}, -1, 1, 92)));
  // Output larger than input: input elements feed several windows.
  EXPECT_TRUE(check_grad([](const T<4>& x) { return adaptive_avg_pool2d<AD>(x, {5, 3}); },
                         uniform<4>({1, 2, 3, 2}, -1, 1, 93)));
}

// A small CNN end to end: conv -> max pool -> adaptive avg pool -> linear -> log_softmax.
TEST(GradCheckModule, SmallCnn) {
  const auto x = distinct<4>({2, 1, 6, 6}, -1, 1, 100);
  const auto w = uniform<4>({3, 1, 3, 3}, -1, 1, 101);
  const auto b = uniform<1>({3}, -0.5, 0.5, 102);
  const auto fc = uniform<2>({3, 4}, -1, 1, 103);
  EXPECT_TRUE(check_grad(
      [](const T<4>& xx, const T<4>& ww, const T<1>& bb, const T<2>& ff) {
        auto h = conv2d<AD>(xx, ww, std::optional<T<1>>(bb), conv_opts({1, 1}, {1, 1}, {1, 1}, 1)).tanh();
        h = max_pool2d<AD>(h, pool_opts({2, 2}, {2, 2}, {0, 0}));
        h = adaptive_avg_pool2d<AD>(h, {1, 1});
        return h.flatten<2>(1, 3).matmul(ff).log_softmax(-1);
      },
      x, w, b, fc));
}

}  // namespace module_grads
}  // namespace ember::gradcheck
