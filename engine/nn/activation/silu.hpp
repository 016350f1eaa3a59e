#pragma once
// SiLU (swish): x * sigmoid(x). No params.
#include "engine/tensor/tensor.hpp"

namespace ember::nn {

struct SiLU {
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return x.mul(x.sigmoid());
  }
};

}  // namespace ember::nn
