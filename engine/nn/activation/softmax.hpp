#pragma once
// Softmax / LogSoftmax along `dim` (PyTorch nn.Softmax(dim) / nn.LogSoftmax(dim)), max-shifted for stability.
// dim defaults to -1 (PyTorch's implicit-dim default is deprecated). No params.
#include "engine/tensor/tensor.hpp"

namespace ember::nn {

struct Softmax {
  int64_t dim = -1;
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return x.softmax(dim);
  }
};

struct LogSoftmax {
  int64_t dim = -1;
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return x.log_softmax(dim);
  }
};

}  // namespace ember::nn
