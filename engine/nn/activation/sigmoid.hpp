#pragma once
// Sigmoid: 1 / (1 + exp(-x)). No params.
#include "engine/tensor/tensor.hpp"

namespace ember::nn {

struct Sigmoid {
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return x.sigmoid();
  }
};

}  // namespace ember::nn
