#pragma once
// LeakyReLU (PyTorch nn.LeakyReLU): x if x > 0 else negative_slope * x. No params.
#include "engine/tensor/tensor.hpp"

namespace ember::nn {

struct LeakyReLU {
  double negative_slope = 0.01;
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return x.mul_scalar(negative_slope).mask_where(x.gt(0.0), x);
  }
};

}  // namespace ember::nn
