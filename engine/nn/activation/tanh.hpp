#pragma once
// Tanh. No params.
#include "engine/tensor/tensor.hpp"

namespace ember::nn {

struct Tanh {
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return x.tanh();
  }
};

}  // namespace ember::nn
