#pragma once
// Softplus (PyTorch nn.Softplus): log(1 + exp(beta x)) / beta, reverting to x where beta x > threshold (PyTorch's
// rule for numerical stability, so the switch point matches). No params.
#include "engine/tensor/tensor.hpp"

namespace ember::nn {

struct Softplus {
  double beta = 1.0, threshold = 20.0;
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    const auto bx = x.mul_scalar(beta);
    // Clamped so the branch that is not selected cannot overflow (an inf there would give a NaN gradient).
    const auto soft = bx.clamp_max(threshold).exp().log1p().div_scalar(beta);
    return soft.mask_where(bx.gt(threshold), x);
  }
};

}  // namespace ember::nn
