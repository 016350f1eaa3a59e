// Finite-difference gradient checks of the Linear op x @ w + bias: one autodiff node whose forward is the CPU's GEMM
// onto the bias rows (or in grad_check_composed matmul + add); x, w and bias all tracked, and without a bias.
#include "engine/backend/optional_ops.hpp"
#include "tests/grad/grad_check.hpp"

namespace ember::gradcheck {
namespace linear_grads {

TEST(GradCheckLinear, InputWeightBias) {
  EXPECT_TRUE(check_grad(
      [](const T<2>& x, const T<2>& w, const T<1>& b) {
        return T<2>(optional_ops::float_linear<AD>(x.primitive(), w.primitive(), &b.primitive()));
      },
      uniform<2>({4, 3}, -1, 1, 1), uniform<2>({3, 5}, -1, 1, 2), uniform<1>({5}, -1, 1, 3)));
  EXPECT_TRUE(check_grad(
      [](const T<2>& x, const T<2>& w) {
        return T<2>(optional_ops::float_linear<AD>(x.primitive(), w.primitive(), nullptr));
      },
      uniform<2>({1, 3}, -1, 1, 4), uniform<2>({3, 2}, -1, 1, 5)));
}

}  // namespace linear_grads
}  // namespace ember::gradcheck
