#pragma once
// ReLU: max(0, x). No params (an empty record); one value serves every backend.
#include "engine/tensor/tensor.hpp"

namespace ember::nn {

struct ReLU {
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return x.relu();
  }
};

}  // namespace ember::nn
