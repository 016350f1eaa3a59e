// GroupNorm, RMSNorm and ConvTranspose2d (engine/nn) against PyTorch 1.13 in float64 (RMSNorm: PyTorch 2.4's
// formula written out in torch): tests/reference/gen_norms_reference.py writes tests/reference/norms_reference.hpp.
// Forward values on every backend of the op suite; the gradients of sum(y * gy) on its Autodiff backend.
#include <array>
#include <optional>
#include <vector>

#include "engine/nn/conv_transpose2d.hpp"
#include "engine/nn/group_norm.hpp"
#include "engine/nn/rms_norm.hpp"
#include "tests/reference/norms_reference.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace norms_layers_cases {

namespace R = ember::test::normsref;
using namespace ember::nn;

template <class B>
class NormsLayers : public ::testing::Test {};
TYPED_TEST_SUITE(NormsLayers, TestBackends, BackendNames);

// Normalized error bounds: PyTorch's 1e-5 (f64) / 1e-4 (f32) on absolute error, tightened to what the sums of
// f32-exact inputs give; the conv cases are GEMM-backed (f16's bound where that variant runs).
template <class B>
double norm_tol() {
  return Tol<B>::f64 ? 1e-10 : 1e-5;
}
template <class B>
double conv_tol() {
  return gemm_tol<B>(norm_tol<B>());
}

template <std::size_t D>
Shape shp(const std::array<int64_t, D>& s) {
  return Shape(std::vector<int64_t>(s.begin(), s.end()));
}
// Inputs require grad so that the Autodiff backend records (a no-op elsewhere).
template <class B, std::size_t D, std::size_t N>
Tensor<B, D> in(const double (&v)[N], const std::array<int64_t, D>& s) {
  return make<B, D>(V(v), s).require_grad();
}

// The gradients of sum(y * gy), on the Autodiff backend (one backward pass: it consumes the graph).
template <class B, std::size_t D, std::size_t N>
auto backward_of(const Tensor<B, D>& y, const double (&gy)[N], const std::array<int64_t, D>& gs) {
  return y.mul(make<B, D>(V(gy), gs)).sum().backward();
}
// t's gradient among them (empty when it has none, which fails the comparison).
template <class B, std::size_t E, class G>
std::vector<double> grad_of(const G& grads, const Tensor<B, E>& t) {
  const auto g = t.grad(grads);
  if (!g) return {};
  return values(*g);
}

// ---------------------------------------------------------------- GroupNorm
TYPED_TEST(NormsLayers, GroupNormAffine4dForwardAndGradients) {
  using B = TypeParam;
  auto m = GroupNormConfig{3, 6, 1e-5, true}.init<B>();
  const auto x = in<B>(R::gn_x, R::gn_x_shape);
  m.weight = m.weight->with_value(in<B>(R::gn_w, R::gn_w_shape));
  m.bias = m.bias->with_value(in<B>(R::gn_b, R::gn_b_shape));
  const auto y = m.forward(x);
  EXPECT_TRUE(matches(y, shp(R::gn_y_shape), V(R::gn_y), norm_tol<B>()));
  if constexpr (IsAutodiff<B>::value) {
    const auto g = backward_of(y, R::gn_gy, R::gn_gy_shape);
    EXPECT_TRUE(close(grad_of(g, x), V(R::gn_dx), norm_tol<B>()));
    EXPECT_TRUE(close(grad_of(g, m.weight->val()), V(R::gn_dw), norm_tol<B>()));
    EXPECT_TRUE(close(grad_of(g, m.bias->val()), V(R::gn_db), norm_tol<B>()));
  }
}

TYPED_TEST(NormsLayers, GroupNormWithoutAffine3d) {
  using B = TypeParam;
  const auto m = GroupNormConfig{2, 4, 1e-3, false}.init<B>();
  EXPECT_FALSE(m.weight.has_value());
  EXPECT_FALSE(m.bias.has_value());
  const auto x = in<B>(R::gn3_x, R::gn3_x_shape);
  const auto y = m.forward(x);
  EXPECT_TRUE(matches(y, shp(R::gn3_y_shape), V(R::gn3_y), norm_tol<B>()));
  if constexpr (IsAutodiff<B>::value) {
    const auto g = backward_of(y, R::gn3_gy, R::gn3_gy_shape);
    EXPECT_TRUE(close(grad_of(g, x), V(R::gn3_dx), norm_tol<B>()));
  }
}

TYPED_TEST(NormsLayers, GroupNormRefusesWrongChannelsAndIndivisibleGroups) {
  using B = TypeParam;
  EXPECT_THROW((GroupNormConfig{4, 6}.init<B>()), ArgumentError);
  const auto m = GroupNormConfig{2, 4}.init<B>();
  const auto x = Tensor<B, 3>::zeros({2, 6, 3});
  EXPECT_THROW(m.forward(x), ShapeError);
}

// ---------------------------------------------------------------- RMSNorm
TYPED_TEST(NormsLayers, RmsNormForwardAndGradients) {
  using B = TypeParam;
  auto m = RMSNormConfig{5, 1e-6, true}.init<B>();
  const auto x = in<B>(R::rms_x, R::rms_x_shape);
  m.weight = m.weight->with_value(in<B>(R::rms_w, R::rms_w_shape));
  const auto y = m.forward(x);
  EXPECT_TRUE(matches(y, shp(R::rms_y_shape), V(R::rms_y), norm_tol<B>()));
  if constexpr (IsAutodiff<B>::value) {
    const auto g = backward_of(y, R::rms_gy, R::rms_gy_shape);
    EXPECT_TRUE(close(grad_of(g, x), V(R::rms_dx), norm_tol<B>()));
    EXPECT_TRUE(close(grad_of(g, m.weight->val()), V(R::rms_dw), norm_tol<B>()));
  }
}

// eps=None is the machine epsilon of the float type: on inputs of order 1e-4, float32's (1.2e-7) changes the result
// by several percent, float64's not at all, so each type must pick its own.
TYPED_TEST(NormsLayers, RmsNormDefaultEpsIsTheFloatTypesEpsilon) {
  using B = TypeParam;
  const auto m = RMSNormConfig{4, std::nullopt, false}.init<B>();
  EXPECT_FALSE(m.weight.has_value());
  const auto y = m.forward(make<B, 2>(V(R::rms_small_x), R::rms_small_x_shape));
  EXPECT_TRUE(matches(y, shp(R::rms_small_y_f32_shape), Tol<B>::f64 ? V(R::rms_small_y_f64) : V(R::rms_small_y_f32),
                      norm_tol<B>()));
}

// ---------------------------------------------------------------- ConvTranspose2d
// Runs ConvTranspose2d with the reference case's weight and bias and checks output and gradients.
#define EMBER_CONV_T_CASE(p, cfg)                                                  \
  do {                                                                             \
    using B = TypeParam;                                                           \
    auto m = (cfg).template init<B>();                                             \
    const auto x = in<B>(R::p##_x, R::p##_x_shape);                                \
    m.weight = m.weight.with_value(in<B>(R::p##_w, R::p##_w_shape));               \
    m.bias = m.bias->with_value(in<B>(R::p##_b, R::p##_b_shape));                  \
    const auto y = m.forward(x);                                                   \
    EXPECT_TRUE(matches(y, shp(R::p##_y_shape), V(R::p##_y), conv_tol<B>()));      \
    if constexpr (IsAutodiff<B>::value) {                                          \
      const auto g = backward_of(y, R::p##_gy, R::p##_gy_shape);                   \
      EXPECT_TRUE(close(grad_of(g, x), V(R::p##_dx), conv_tol<B>()));              \
      EXPECT_TRUE(close(grad_of(g, m.weight.val()), V(R::p##_dw), conv_tol<B>())); \
      EXPECT_TRUE(close(grad_of(g, m.bias->val()), V(R::p##_db), conv_tol<B>()));  \
    }                                                                              \
  } while (0)

ConvTranspose2dConfig conv_t_config(int64_t in, int64_t out, std::array<int64_t, 2> k) {
  ConvTranspose2dConfig c;
  c.in_channels = in;
  c.out_channels = out;
  c.kernel_size = k;
  return c;
}

TYPED_TEST(NormsLayers, ConvTranspose2dPlain) { EMBER_CONV_T_CASE(ct, conv_t_config(4, 3, {3, 3})); }

TYPED_TEST(NormsLayers, ConvTranspose2dStrideOutputPaddingGroupsDilation) {
  auto c = conv_t_config(4, 6, {3, 2});
  c.stride = {2, 3};
  c.padding = {1, 0};
  c.output_padding = {1, 2};
  c.groups = 2;
  c.dilation = {2, 1};
  EMBER_CONV_T_CASE(ctg, c);
}

TYPED_TEST(NormsLayers, ConvTranspose2dOutputPaddingReachingTheStride) {
  auto c = conv_t_config(2, 2, {2, 2});
  c.padding = {1, 1};
  c.output_padding = {1, 1};
  c.dilation = {2, 2};
  EMBER_CONV_T_CASE(ctd, c);
}

TYPED_TEST(NormsLayers, ConvTranspose2dWeightIsTorchsLayoutAndInitBound) {
  using B = TypeParam;
  auto c = conv_t_config(4, 6, {3, 2});
  c.groups = 2;
  const auto m = c.init<B>();
  EXPECT_EQ(m.weight.val().shape(), (Shape{4, 3, 3, 2}));
  EXPECT_EQ(m.bias->val().shape(), (Shape{6}));
  // PyTorch's bound 1 / sqrt(fan_in), fan_in = weight dim 1 * kH * kW = 3 * 6.
  const double bound = 1.0 / std::sqrt(18.0);
  for (double v : values(m.weight.val())) EXPECT_LE(std::abs(v), bound);
  for (double v : values(m.bias->val())) EXPECT_LE(std::abs(v), bound);
}

TYPED_TEST(NormsLayers, ConvTranspose2dRefusesBadArguments) {
  using B = TypeParam;
  const auto x = Tensor<B, 4>::zeros({1, 4, 3, 3});
  const auto w = Tensor<B, 4>::zeros({4, 2, 3, 3});
  ConvTranspose2dOptions o;
  o.stride = {2, 2};
  o.output_padding = {2, 0};  // not smaller than stride or dilation
  EXPECT_THROW(conv_transpose2d<B>(x, w, std::nullopt, o), ArgumentError);
  EXPECT_THROW(conv_transpose2d<B>(Tensor<B, 4>::zeros({1, 3, 3, 3}), w, std::nullopt, {}), ShapeError);
  EXPECT_THROW(conv_transpose2d<B>(x, w, Tensor<B, 1>::zeros({3}), {}), ShapeError);
  ConvTranspose2dOptions p;
  p.padding = {3, 3};  // output 3 + 2 - 6 < 1
  EXPECT_THROW(conv_transpose2d<B>(x, w, std::nullopt, p), ShapeError);
  auto c = conv_t_config(4, 6, {3, 3});
  c.stride = {2, 2};
  c.output_padding = {2, 0};
  EXPECT_THROW(c.init<B>(), ArgumentError);
}

}  // namespace norms_layers_cases
}  // namespace ember::test
