#pragma once
// Threshold (PyTorch nn.Threshold): y = x if x > threshold else value; x == threshold gives value. The
// gradient is 1 where x passes and 0 where it is replaced. No params.
#include "engine/tensor/tensor.hpp"

namespace ember::nn {

struct Threshold {
  double threshold = 0.0, value = 0.0;
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return x.mask_fill(x.le(threshold), value);
  }
};

}  // namespace ember::nn
