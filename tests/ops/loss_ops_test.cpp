// The cross-entropy op (optional_ops.hpp float_cross_entropy) on every backend: the CPU's row kernels, the composed
// default elsewhere (Vulkan, CUDA, Fusion over them), one autodiff node either way. nn::cross_entropy without label
// smoothing is this op; its values against PyTorch are in nn_reference_test (CPU). Here, against a double
// reference worked out in the test: the per-batch loss for both reductions, on rows far apart in scale (a row of
// large logits, and the whole batch shifted by 1000, where exp alone overflows); its gradient on the Autodiff
// backend ((softmax - one_hot) / N); a target outside [0, C) is an IndexError and a batch mismatch a ShapeError.
#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/nn/loss/cross_entropy.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace loss_ops_cases {

template <class B>
class LossOps : public ::testing::Test {};
TYPED_TEST_SUITE(LossOps, TestBackends, BackendNames);

constexpr int64_t kN = 5, kC = 7;

std::vector<double> ce_logits(double shift) {
  std::vector<double> x(kN * kC);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 2.5 * std::sin(1.3 * static_cast<double>(i) + 0.4) + shift;
  for (int64_t j = 0; j < kC; ++j) x[3 * kC + j] = 20 + 3 * x[3 * kC + j];  // row 3: large logits
  return x;
}
const std::vector<int64_t> kTargets{6, 0, 3, 3, 1};

// Per-row loss and d loss / d logits of sum(loss), in double.
struct Reference {
  std::vector<double> loss, grad;
};
Reference reference(const std::vector<double>& x) {
  Reference r{std::vector<double>(kN), std::vector<double>(x.size())};
  for (int64_t i = 0; i < kN; ++i) {
    const double* row = x.data() + i * kC;
    const double m = *std::max_element(row, row + kC);
    double sum = 0;
    for (int64_t j = 0; j < kC; ++j) sum += std::exp(row[j] - m);
    r.loss[i] = std::log(sum) - (row[kTargets[i]] - m);
    for (int64_t j = 0; j < kC; ++j) r.grad[i * kC + j] = std::exp(row[j] - m) / sum - (j == kTargets[i] ? 1.0 : 0.0);
  }
  return r;
}

TYPED_TEST(LossOps, CrossEntropyValuesGradientAndErrors) {
  using B = TypeParam;
  const auto t = Tensor<B, 1, Int>::from_values(kTargets, {kN});
  const double tol = Tol<B>::loose;
  for (const double shift : {0.0, 1000.0}) {
    SCOPED_TRACE(::testing::Message() << "logits + " << shift);
    const std::vector<double> xv = ce_logits(shift);
    const Reference ref = reference(xv);
    double total = 0;
    for (double l : ref.loss) total += l;
    const auto x = make<B, 2>(xv, {kN, kC});
    // + 1000 is exact in f64 but rounds the logits in f32 (ulp 6e-5): the f32 bound covers that.
    const double shifted_tol = shift != 0 && !Tol<B>::f64 ? 1e-4 : tol;
    EXPECT_TRUE(matches(nn::cross_entropy(x, t), Shape{1}, {total / kN}, shifted_tol));
    EXPECT_TRUE(matches(nn::cross_entropy(x, t, {0.0, nn::Reduction::Sum}), Shape{1}, {total}, shifted_tol));
    if constexpr (IsAutodiff<B>::value) {
      if (shift == 0) {
        const auto xg = make<B, 2>(xv, {kN, kC}).require_grad();
        const auto grads = nn::cross_entropy(xg, t, {0.0, nn::Reduction::Sum}).backward();
        ASSERT_TRUE(xg.grad(grads).has_value());
        EXPECT_TRUE(matches(*xg.grad(grads), Shape{kN, kC}, ref.grad, tol));
      }
    }
  }
  const auto x = make<B, 2>(ce_logits(0), {kN, kC});
  for (const int64_t bad : {int64_t{-1}, kC}) {
    std::vector<int64_t> tb(kTargets);
    tb[2] = bad;
    EXPECT_THROW(nn::cross_entropy(x, Tensor<B, 1, Int>::from_values(tb, {kN})), IndexError) << bad;
  }
  EXPECT_THROW(nn::cross_entropy(x, Tensor<B, 1, Int>::from_values(std::vector<int64_t>{0, 1}, {2})), ShapeError);
}

}  // namespace loss_ops_cases
}  // namespace ember::test
