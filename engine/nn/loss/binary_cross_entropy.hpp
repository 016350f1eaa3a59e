#pragma once
// binary_cross_entropy_with_logits (F.binary_cross_entropy_with_logits), in the numerically stable form
//   max(x, 0) - x t + log(1 + exp(-|x|)),
// which equals -(t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))) but never exponentiates a positive number, so it
// stays finite (and exact) for large |x| where the naive form gives log(0) = -inf.
#include "engine/nn/loss/reduction.hpp"

namespace ember::nn {

template <Backend B, std::size_t D>
Tensor<B, 1> binary_cross_entropy_with_logits(const Tensor<B, D>& logits, const Tensor<B, D>& targets,
                                              Reduction reduction = Reduction::Mean) {
  detail::check_same_shape("binary_cross_entropy_with_logits", logits, targets);
  const auto loss = logits.relu().sub(logits.mul(targets)).add(logits.abs().neg().exp().log1p());
  return detail::reduce_loss(loss, reduction);
}

}  // namespace ember::nn
