#pragma once
// huber_loss (F.huber_loss): with d = input - target,
//   0.5 d^2                    where |d| <= delta,
//   delta (|d| - 0.5 delta)    elsewhere,
// reduced. Quadratic near zero, linear (gradient +-delta) in the tails.
#include <fmt/format.h>

#include "engine/nn/loss/reduction.hpp"

namespace ember::nn {

template <Backend B, std::size_t D>
Tensor<B, 1> huber_loss(const Tensor<B, D>& input, const Tensor<B, D>& target, double delta = 1.0,
                        Reduction reduction = Reduction::Mean) {
  if (!(delta > 0)) throw ArgumentError(fmt::format("huber_loss: delta must be positive, got {:f}", delta));
  detail::check_same_shape("huber_loss", input, target);
  const auto d = input.sub(target);
  const auto ad = d.abs();
  const auto quadratic = d.mul(d).mul_scalar(0.5);
  const auto linear = ad.sub_scalar(0.5 * delta).mul_scalar(delta);
  return detail::reduce_loss(quadratic.mask_where(ad.gt(delta), linear), reduction);
}

}  // namespace ember::nn
