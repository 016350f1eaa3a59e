// ember::nn forward values against tests/reference/nn_reference.hpp (PyTorch formulas written out in NumPy by
// tests/reference/gen_nn_reference.py), on every backend of the op suite.
#include "tests/reference/nn_reference.hpp"

#include <gtest/gtest.h>

#include "engine/nn/nn.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace {

using namespace ember::nn;
namespace R = ember::test::nnref;

template <std::size_t N>
std::vector<double> vec(const double (&a)[N]) {
  return {a, a + N};
}
template <std::size_t D>
Shape shp(const std::array<int64_t, D>& s) {
  return Shape(std::vector<int64_t>(s.begin(), s.end()));
}
template <class B, std::size_t D, std::size_t N>
Tensor<B, D> ref(const double (&a)[N], const std::array<int64_t, D>& s) {
  return Tensor<B, D>::from_values(vec(a), s);
}
// Replaces a (lazy) param's value with `v`, keeping its id and role.
template <class T>
Param<T> with_val(const Param<T>& p, const T& v) {
  return p.with_value(v);
}

template <class B>
class NnReference : public ::testing::Test {};
TYPED_TEST_SUITE(NnReference, TestBackends, BackendNames);

// ---------------------------------------------------------------- activations
TYPED_TEST(NnReference, Gelu) {
  using B = TypeParam;
  const auto x = ref<B>(R::act_x, R::act_x_shape);
  EXPECT_TRUE(matches(GELU{}.forward(x), shp(R::act_x_shape), vec(R::gelu_exact), Tol<B>::loose));
  EXPECT_TRUE(matches(GELU{GeluApproximate::Tanh}.forward(x), shp(R::act_x_shape), vec(R::gelu_tanh), Tol<B>::loose));
}

TYPED_TEST(NnReference, SiluAndLeakyRelu) {
  using B = TypeParam;
  const auto x = ref<B>(R::act_x, R::act_x_shape);
  EXPECT_TRUE(matches(SiLU{}.forward(x), shp(R::act_x_shape), vec(R::silu), Tol<B>::loose));
  EXPECT_TRUE(matches(LeakyReLU{0.2}.forward(x), shp(R::act_x_shape), vec(R::leaky_relu_0_2), Tol<B>::exact));
  EXPECT_DOUBLE_EQ(LeakyReLU{}.negative_slope, 0.01);
}

TYPED_TEST(NnReference, ThresholdAtTheThresholdGivesValue) {
  using B = TypeParam;
  const auto x = ref<B>(R::threshold_x, R::threshold_x_shape);
  const auto y = Threshold{0.5, -2.0}.forward(x);
  EXPECT_TRUE(matches(y, shp(R::threshold_x_shape), vec(R::threshold_y), Tol<B>::exact));
  EXPECT_EQ(values(y)[0], -2.0);  // x == threshold is replaced (the test is x > threshold)
}

TYPED_TEST(NnReference, PreluPerChannel) {
  using B = TypeParam;
  auto m = PReLUConfig{3}.init<B>();
  m.weight = with_val(m.weight, ref<B>(R::prelu_w, R::prelu_w_shape));
  EXPECT_TRUE(
      matches(m.forward(ref<B>(R::prelu_x, R::prelu_x_shape)), shp(R::prelu_x_shape), vec(R::prelu_y), Tol<B>::exact));
}

TYPED_TEST(NnReference, SoftplusThreshold) {
  using B = TypeParam;
  EXPECT_TRUE(matches(Softplus{2.0, 5.0}.forward(ref<B>(R::softplus_b2_t5_x, R::softplus_b2_t5_x_shape)),
                      shp(R::softplus_b2_t5_x_shape), vec(R::softplus_b2_t5_y), Tol<B>::loose));
  const auto y = Softplus{}.forward(ref<B>(R::softplus_default_x, R::softplus_default_x_shape));
  EXPECT_TRUE(matches(y, shp(R::softplus_default_x_shape), vec(R::softplus_default_y), Tol<B>::loose));
  EXPECT_EQ(values(y)[2], 20.5);  // beta x > threshold: exactly x
}

TYPED_TEST(NnReference, SoftmaxAndLogSoftmax) {
  using B = TypeParam;
  const auto x = ref<B>(R::softmax_x, R::softmax_x_shape);
  EXPECT_TRUE(matches(Softmax{1}.forward(x), shp(R::softmax_x_shape), vec(R::softmax_y), Tol<B>::loose));
  EXPECT_TRUE(matches(LogSoftmax{1}.forward(x), shp(R::softmax_x_shape), vec(R::log_softmax_y), Tol<B>::loose));
  EXPECT_TRUE(matches(Softmax{}.forward(x), shp(R::softmax_x_shape), vec(R::softmax_y), Tol<B>::loose));  // dim -1
}

// ---------------------------------------------------------------- layers
TYPED_TEST(NnReference, LinearBatched) {
  using B = TypeParam;
  auto m = LinearConfig{4, 5}.init<B>();
  m.weight = with_val(m.weight, ref<B>(R::linear_w, R::linear_w_shape));
  m.bias = with_val(*m.bias, ref<B>(R::linear_b, R::linear_b_shape));
  const auto x = ref<B>(R::linear_x, R::linear_x_shape);
  EXPECT_TRUE(matches(m.forward(x), Shape{2, 3, 5}, vec(R::linear_y), Tol<B>::exact));
  // Rank 2 (rows flattened) gives the same rows.
  EXPECT_TRUE(matches(m.forward(x.template reshape<2>({6, 4})), Shape{6, 5}, vec(R::linear_y), Tol<B>::exact));
}

TYPED_TEST(NnReference, LayerNorm) {
  using B = TypeParam;
  auto m = LayerNormConfig{5}.init<B>();
  m.gamma = with_val(m.gamma, ref<B>(R::layer_norm_gamma, R::layer_norm_gamma_shape));
  m.beta = with_val(m.beta, ref<B>(R::layer_norm_beta, R::layer_norm_beta_shape));
  EXPECT_TRUE(matches(m.forward(ref<B>(R::layer_norm_x, R::layer_norm_x_shape)), shp(R::layer_norm_x_shape),
                      vec(R::layer_norm_y), Tol<B>::loose));
}

// Two training steps (batch statistics, running statistics updated with the unbiased variance), then eval.
#define EMBER_BATCH_NORM_CASE(M, P)                                                                                    \
  do {                                                                                                                 \
    M.gamma = with_val(M.gamma, ref<B>(R::P##_gamma, R::P##_gamma_shape));                                             \
    M.beta = with_val(M.beta, ref<B>(R::P##_beta, R::P##_beta_shape));                                                 \
    EXPECT_TRUE(                                                                                                       \
        matches(M.forward(ref<B>(R::P##_x1, R::P##_x1_shape)), shp(R::P##_x1_shape), vec(R::P##_y1), Tol<B>::loose));  \
    EXPECT_TRUE(matches(M.running_mean.val(), Shape{3}, vec(R::P##_rm1), Tol<B>::loose));                              \
    EXPECT_TRUE(matches(M.running_var.val(), Shape{3}, vec(R::P##_rv1), Tol<B>::loose));                               \
    EXPECT_TRUE(                                                                                                       \
        matches(M.forward(ref<B>(R::P##_x2, R::P##_x2_shape)), shp(R::P##_x2_shape), vec(R::P##_y2), Tol<B>::loose));  \
    EXPECT_TRUE(matches(M.running_mean.val(), Shape{3}, vec(R::P##_rm2), Tol<B>::loose));                              \
    EXPECT_TRUE(matches(M.running_var.val(), Shape{3}, vec(R::P##_rv2), Tol<B>::loose));                               \
    EXPECT_FALSE(M.running_mean.val().is_require_grad());                                                              \
    auto ev = eval(M);                                                                                                 \
    EXPECT_TRUE(                                                                                                       \
        matches(ev.forward(ref<B>(R::P##_x3, R::P##_x3_shape)), shp(R::P##_x3_shape), vec(R::P##_y3), Tol<B>::loose)); \
    EXPECT_TRUE(matches(ev.running_var.val(), Shape{3}, vec(R::P##_rv2), Tol<B>::loose)); /* eval: no update */        \
  } while (0)

TYPED_TEST(NnReference, BatchNorm2dTrainThenEval) {
  using B = TypeParam;
  auto m = BatchNorm2dConfig{3}.init<B>();
  EMBER_BATCH_NORM_CASE(m, bn2d);
}

TYPED_TEST(NnReference, BatchNorm1dTrainThenEval) {
  using B = TypeParam;
  auto m = BatchNorm1dConfig{3}.init<B>();
  EMBER_BATCH_NORM_CASE(m, bn1d);
  auto m3 = BatchNorm1dConfig{3}.init<B>();
  EMBER_BATCH_NORM_CASE(m3, bn1d_ncl);
}

// ---------------------------------------------------------------- losses
TYPED_TEST(NnReference, CrossEntropyWithLabelSmoothing) {
  using B = TypeParam;
  const auto x = ref<B>(R::ce_logits, R::ce_logits_shape);
  const auto t =
      Tensor<B, 1, Int>::from_values(std::vector<int64_t>(std::begin(R::ce_targets), std::end(R::ce_targets)), {4});
  const double tol = Tol<B>::loose;
  EXPECT_TRUE(matches(cross_entropy(x, t), Shape{1}, vec(R::ce_mean_ls0_0), tol));
  EXPECT_TRUE(matches(cross_entropy(x, t, {0.1}), Shape{1}, vec(R::ce_mean_ls0_1), tol));
  EXPECT_TRUE(matches(cross_entropy(x, t, {0.25}), Shape{1}, vec(R::ce_mean_ls0_25), tol));
  EXPECT_TRUE(matches(cross_entropy(x, t, {0.0, Reduction::Sum}), Shape{1}, vec(R::ce_sum_ls0_0), tol));
  EXPECT_TRUE(matches(cross_entropy(x, t, {0.1, Reduction::Sum}), Shape{1}, vec(R::ce_sum_ls0_1), tol));
  EXPECT_TRUE(matches(nll_loss(ref<B>(R::ce_logp, R::ce_logp_shape), t), Shape{1}, vec(R::nll_mean), tol));
  EXPECT_TRUE(matches(nll_loss(x.log_softmax(1), t), Shape{1}, vec(R::nll_mean), tol));
}

TYPED_TEST(NnReference, BceWithLogitsStableForLargeLogits) {
  using B = TypeParam;
  const auto x = ref<B>(R::bce_x, R::bce_x_shape);
  const auto t = ref<B>(R::bce_t, R::bce_t_shape);
  EXPECT_TRUE(matches(binary_cross_entropy_with_logits(x, t), Shape{1}, vec(R::bce_mean), Tol<B>::loose));
  // Element by element: finite and exact to rounding even at |x| = 1000.
  const auto xs = values(x), ts = values(t);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const auto xi = Tensor<B, 1>::from_values(std::vector<double>{xs[i]}, {1});
    const auto ti = Tensor<B, 1>::from_values(std::vector<double>{ts[i]}, {1});
    const double got = binary_cross_entropy_with_logits(xi, ti, Reduction::Sum).item();
    EXPECT_TRUE(std::isfinite(got)) << "x = " << xs[i];
    EXPECT_NEAR(got, R::bce_per[i], 1e-6 * std::max(1.0, std::abs(R::bce_per[i]))) << "x = " << xs[i];
  }
}

TYPED_TEST(NnReference, HuberAndMse) {
  using B = TypeParam;
  const auto x = ref<B>(R::huber_x, R::huber_x_shape);
  const auto t = ref<B>(R::huber_t, R::huber_t_shape);
  EXPECT_TRUE(matches(huber_loss(x, t), Shape{1}, vec(R::huber_d1), Tol<B>::exact));
  EXPECT_TRUE(matches(huber_loss(x, t, 0.5), Shape{1}, vec(R::huber_d0_5), Tol<B>::exact));
  EXPECT_TRUE(matches(huber_loss(x, t, 2.0, Reduction::Sum), Shape{1}, vec(R::huber_d2_sum), Tol<B>::exact));
  EXPECT_TRUE(matches(mse_loss(x, t), Shape{1}, vec(R::mse_mean), Tol<B>::exact));
}

}  // namespace
}  // namespace ember::test
