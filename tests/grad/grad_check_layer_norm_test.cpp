// Finite-difference gradient checks of the LayerNorm op: x, gamma and beta through one autodiff node whose backward
// is the CPU's fused row kernel (or in grad_check_composed the composed default), on a rank-3 input whose rows are
// not all alike (an offset row and a narrow one, where rstd is large). nn::LayerNorm calls this op (its golden
// tests against torch are in nn_test).
#include <cmath>
#include <vector>

#include "engine/backend/optional_ops.hpp"
#include "tests/grad/grad_check.hpp"

namespace ember::gradcheck {
namespace layer_norm_grads {

TEST(GradCheckLayerNorm, InputGammaBeta) {
  std::vector<double> x(30);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(1.7 * static_cast<double>(i) + 0.3);
  for (std::size_t j = 0; j < 5; ++j) x[5 + j] += 4;                                  // row 1: offset mean
  for (std::size_t j = 0; j < 5; ++j) x[10 + j] = 0.3 + 0.05 * static_cast<double>(j * j % 3);  // row 2: narrow
  EXPECT_TRUE(check_grad(
      [](const T<3>& xs, const T<1>& g, const T<1>& b) {
        return T<3>(optional_ops::float_layer_norm<AD>(xs.primitive(), g.primitive(), b.primitive(), 1e-5).out);
      },
      tensor<3>(x, {2, 3, 5}), uniform<1>({5}, 0.5, 1.5, 2), uniform<1>({5}, -1, 1, 3)));
}
}  // namespace layer_norm_grads
}  // namespace ember::gradcheck
