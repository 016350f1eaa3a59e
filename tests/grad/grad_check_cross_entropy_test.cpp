// Finite-difference gradient checks of the cross-entropy op (optional_ops.hpp float_cross_entropy): the logits'
// gradient through one autodiff node whose backward is the CPU's row kernel (in grad_check_composed the composed
// default, under grad_check_fusion the Fusion stack), with rows far apart in scale (a row of large logits, where the
// max shift matters) and through both reductions. The loss's values against PyTorch are in nn_reference_test.
#include <cmath>
#include <vector>

#include "engine/nn/loss/cross_entropy.hpp"
#include "tests/grad/grad_check.hpp"

namespace ember::gradcheck {
namespace cross_entropy_grads {

TEST(GradCheckCrossEntropy, LogitsThroughMeanAndSum) {
  std::vector<double> x(4 * 6);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(1.3 * static_cast<double>(i) + 0.2);
  for (std::size_t j = 0; j < 6; ++j) x[12 + j] = 30 + 2 * x[12 + j];  // row 2: large logits
  const auto targets = TI<1>::from_values(std::vector<int64_t>{5, 0, 3, 1}, {4});
  EXPECT_TRUE(check_grad([&](const T<2>& z) { return nn::cross_entropy(z, targets); }, tensor<2>(x, {4, 6})));
  EXPECT_TRUE(check_grad([&](const T<2>& z) { return nn::cross_entropy(z, targets, {0.0, nn::Reduction::Sum}); },
                         tensor<2>(x, {4, 6})));
}

}  // namespace cross_entropy_grads
}  // namespace ember::gradcheck
