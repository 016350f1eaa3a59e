#pragma once
// How a loss reduces its per-element (or per-sample) values to the scalar it returns (shape [1]).
#include <fmt/format.h>

#include "engine/tensor/tensor.hpp"

namespace ember::nn {

enum class Reduction { Mean, Sum };

namespace detail {
template <Backend B, std::size_t D>
Tensor<B, 1> reduce_loss(const Tensor<B, D>& per_element, Reduction r) {
  return r == Reduction::Mean ? per_element.mean() : per_element.sum();
}
template <Backend B, std::size_t D>
void check_same_shape(const char* who, const Tensor<B, D>& a, const Tensor<B, D>& b) {
  if (!(a.shape() == b.shape()))
    throw ShapeError(fmt::format("{}: input {} and target {} must have the same shape", who, a.shape().to_string(),
                                 b.shape().to_string()));
}
}  // namespace detail

}  // namespace ember::nn
