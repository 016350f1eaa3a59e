// Finite-difference gradient checks of scaled_dot_product_attention: q, k, v through the fused op (one autodiff
// node whose backward is the CPU's flash-attention backward, or in grad_check_composed the composed default), with
// causal masking, a broadcast bias holding -inf, S != L, Ev != E, sizes across the CPU kernel's 64-row tiles, and a
// bias that requires grad (the composed backward).
#include <limits>

#include "engine/nn/functional/scaled_dot_product_attention.hpp"
#include "tests/grad/grad_check.hpp"

namespace ember::gradcheck {
namespace attention_grads {

TEST(GradCheckAttention, PlainAndCausal) {
  for (bool causal : {false, true})
    EXPECT_TRUE(check_grad(
        [causal](const T<4>& q, const T<4>& k, const T<4>& v) {
          return nn::scaled_dot_product_attention(q, k, v, std::nullopt, causal);
        },
        uniform<4>({1, 2, 4, 3}, -1, 1, 1), uniform<4>({1, 2, 5, 3}, -1, 1, 2), uniform<4>({1, 2, 5, 2}, -1, 1, 3)))
        << "causal " << causal;
}

TEST(GradCheckAttention, MaskedBiasAcrossTiles) {
  // 66 query rows: two CPU tiles; key 1 masked for every query of batch 0.
  std::vector<double> bias(2 * 3, 0.25);
  bias[1] = -std::numeric_limits<double>::infinity();
  const auto b = tensor<4>(bias, {2, 1, 1, 3});
  EXPECT_TRUE(check_grad(
      [&](const T<4>& q, const T<4>& k, const T<4>& v) {
        return nn::scaled_dot_product_attention(q, k, v, b, true, 0.8);
      },
      uniform<4>({2, 1, 66, 2}, -1, 1, 4), uniform<4>({2, 1, 3, 2}, -1, 1, 5), uniform<4>({2, 1, 3, 3}, -1, 1, 6)));
}

TEST(GradCheckAttention, TrainableBias) {
  EXPECT_TRUE(check_grad(
      [](const T<4>& q, const T<4>& k, const T<4>& v, const T<4>& b) {
        return nn::scaled_dot_product_attention(q, k, v, b);
      },
      uniform<4>({1, 2, 3, 2}, -1, 1, 7), uniform<4>({1, 2, 4, 2}, -1, 1, 8), uniform<4>({1, 2, 4, 2}, -1, 1, 9),
      uniform<4>({1, 2, 1, 4}, -1, 1, 10)));
}

}  // namespace attention_grads
}  // namespace ember::gradcheck
