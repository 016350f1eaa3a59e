#pragma once
// The typed fronts of the composed shape ops that are free functions in PyTorch: einsum, interpolate, baddbmm
// (the rest are Tensor methods, tensor.hpp).
#include <string>
#include <vector>

#include "engine/tensor/einsum.hpp"
#include "engine/tensor/tensor.hpp"

namespace ember {

// torch.einsum(equation, xs...) with the output rank as the template argument (a scalar output is rank 1, shape [1]).
template <std::size_t DOut, Backend B, std::size_t... Ds>
Tensor<B, DOut> einsum(const std::string& equation, const Tensor<B, Ds>&... xs) {
  std::size_t rank = 0;
  auto p = shape_ops::einsum<B>(equation, std::vector<typename B::FloatPrimitive>{xs.primitive()...}, &rank);
  if (std::max<std::size_t>(rank, 1) != DOut)
    throw ShapeError(fmt::format("einsum: '{}' gives rank {}, asked for rank {}", equation, rank, DOut));
  return Tensor<B, DOut>(std::move(p));
}

// torch.nn.functional.interpolate on [N, C, H, W] (nearest or bilinear).
template <Backend B>
Tensor<B, 4> interpolate(const Tensor<B, 4>& x, const InterpolateOptions& options) {
  return Tensor<B, 4>(shape_ops::interpolate<B>(x.primitive(), options));
}

// torch.baddbmm(input, batch1, batch2, beta=, alpha=).
template <Backend B>
Tensor<B, 3> baddbmm(const Tensor<B, 3>& input, const Tensor<B, 3>& batch1, const Tensor<B, 3>& batch2,
                     double beta = 1, double alpha = 1) {
  return input.baddbmm(batch1, batch2, beta, alpha);
}

}  // namespace ember
