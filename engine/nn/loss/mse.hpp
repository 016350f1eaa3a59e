#pragma once
// mse_loss (F.mse_loss): (input - target)^2, reduced.
#include "engine/nn/loss/reduction.hpp"

namespace ember::nn {

template <Backend B, std::size_t D>
Tensor<B, 1> mse_loss(const Tensor<B, D>& input, const Tensor<B, D>& target, Reduction reduction = Reduction::Mean) {
  detail::check_same_shape("mse_loss", input, target);
  const auto d = input.sub(target);
  return detail::reduce_loss(d.mul(d), reduction);
}

}  // namespace ember::nn
