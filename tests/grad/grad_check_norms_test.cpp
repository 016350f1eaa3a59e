// Finite-difference gradient checks (f64) for the issue-13 layers: conv_transpose2d (stride, padding, output_padding,
// dilation, groups, with and without bias; input, weight and bias gradients), GroupNorm and RMSNorm (input and
// affine params).
#include <gtest/gtest.h>

#include "engine/nn/group_norm.hpp"
#include "engine/nn/rms_norm.hpp"
#include "engine/tensor/conv_transpose.hpp"
#include "tests/grad/grad_check.hpp"

namespace ember::gradcheck {
namespace norms_grads {

// ---------------------------------------------------------------- conv_transpose2d
ConvTranspose2dOptions ct_opts(std::array<int64_t, 2> stride, std::array<int64_t, 2> padding,
                               std::array<int64_t, 2> output_padding, std::array<int64_t, 2> dilation,
                               int64_t groups) {
  ConvTranspose2dOptions o;
  o.stride = stride;
  o.padding = padding;
  o.output_padding = output_padding;
  o.dilation = dilation;
  o.groups = groups;
  return o;
}

// ws: [C_in, C_out / groups, kH, kW]; the result goes through tanh so that every gradient is non-trivial.
::testing::AssertionResult check_conv_t(std::array<int64_t, 4> xs, std::array<int64_t, 4> ws,
                                        const ConvTranspose2dOptions& o, uint64_t seed) {
  const auto x = uniform<4>(xs, -1, 1, seed);
  const auto w = uniform<4>(ws, -1, 1, seed + 1);
  const auto b = uniform<1>({ws[1] * o.groups}, -1, 1, seed + 2);
  auto with_bias = check_grad(
      [o](const T<4>& xx, const T<4>& ww, const T<1>& bb) {
        return conv_transpose2d<AD>(xx, ww, std::optional<T<1>>(bb), o).tanh();
      },
      x, w, b);
  if (!with_bias) return with_bias << " (with bias)";
  auto without = check_grad(
      [o](const T<4>& xx, const T<4>& ww) { return conv_transpose2d<AD>(xx, ww, std::nullopt, o).tanh(); }, x, w);
  if (!without) return without << " (without bias)";
  return ::testing::AssertionSuccess();
}

TEST(GradCheckConvTranspose2d, Plain) {
  EXPECT_TRUE(check_conv_t({2, 3, 3, 3}, {3, 2, 2, 3}, ct_opts({1, 1}, {0, 0}, {0, 0}, {1, 1}, 1), 60));
}
TEST(GradCheckConvTranspose2d, StridePaddingOutputPadding) {
  EXPECT_TRUE(check_conv_t({1, 2, 3, 2}, {2, 3, 3, 3}, ct_opts({2, 3}, {1, 1}, {1, 2}, {1, 1}, 1), 63));
}
TEST(GradCheckConvTranspose2d, GroupsAndDilation) {
  EXPECT_TRUE(check_conv_t({1, 4, 3, 3}, {4, 1, 2, 3}, ct_opts({2, 1}, {0, 1}, {0, 0}, {2, 2}, 2), 66));
}
TEST(GradCheckConvTranspose2d, OutputPaddingReachingTheStride) {
  EXPECT_TRUE(check_conv_t({1, 2, 3, 3}, {2, 2, 2, 2}, ct_opts({1, 1}, {1, 0}, {1, 1}, {2, 2}, 1), 69));
}

// ---------------------------------------------------------------- GroupNorm, RMSNorm
// The layer's param holding t, tracked exactly when t is (check_grad also evaluates with untracked inputs, and a
// trainable param would make those tracked).
Param<T<1>> param_of(const T<1>& t) { return make_param(t, t.is_require_grad()); }

TEST(GradCheckNorms, GroupNorm) {
  const auto m = nn::GroupNormConfig{2, 4, 1e-5, true}.init<AD>();
  EXPECT_TRUE(check_grad(
      [&m](const T<4>& x, const T<1>& w, const T<1>& b) {
        auto mm = m;
        mm.weight = param_of(w);
        mm.bias = param_of(b);
        return mm.forward(x).tanh();
      },
      uniform<4>({2, 4, 2, 3}, -1, 1, 70), uniform<1>({4}, 0.5, 1.5, 71), uniform<1>({4}, -1, 1, 72)));
}

TEST(GradCheckNorms, RmsNorm) {
  const auto m = nn::RMSNormConfig{5, 1e-6, true}.init<AD>();
  EXPECT_TRUE(check_grad(
      [&m](const T<3>& x, const T<1>& w) {
        auto mm = m;
        mm.weight = param_of(w);
        return mm.forward(x).tanh();
      },
      uniform<3>({2, 3, 5}, -1, 1, 73), uniform<1>({5}, 0.5, 1.5, 74)));
}

}  // namespace norms_grads
}  // namespace ember::gradcheck
