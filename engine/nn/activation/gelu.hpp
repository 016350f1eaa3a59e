#pragma once
// GELU (PyTorch nn.GELU): approximate None is x * Phi(x) with the exact normal CDF; Tanh is
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). No params.
#include "engine/tensor/tensor.hpp"

namespace ember::nn {

enum class GeluApproximate { None, Tanh };

struct GELU {
  GeluApproximate approximate = GeluApproximate::None;
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return x.gelu(approximate == GeluApproximate::Tanh);
  }
};

}  // namespace ember::nn
