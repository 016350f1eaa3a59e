#pragma once
// Module ops on tensors (PyTorch semantics): convolutions and pooling over NCHW (NCL for 1-D) layouts.
#include <optional>

#include "engine/tensor/tensor.hpp"

namespace ember {

template <Backend B>
Tensor<B, 4> conv2d(const Tensor<B, 4>& x, const Tensor<B, 4>& weight, const std::optional<Tensor<B, 1>>& bias,
                    const Conv2dOptions& o = {}) {
  const Shape bs = bias ? bias->shape() : Shape{};
  checks::conv2d(x.shape(), weight.shape(), bias ? &bs : nullptr, o);
  const typename B::FloatPrimitive* bp = bias ? &bias->primitive() : nullptr;
  return Tensor<B, 4>(B::conv2d(x.primitive(), weight.primitive(), bp, o));
}

struct Conv1dOptions {
  int64_t stride = 1, padding = 0, dilation = 1, groups = 1;
};

// A conv2d over a height-1 image: x [N, C, L], weight [C_out, C_in/groups, K].
template <Backend B>
Tensor<B, 3> conv1d(const Tensor<B, 3>& x, const Tensor<B, 3>& weight, const std::optional<Tensor<B, 1>>& bias,
                    const Conv1dOptions& o = {}) {
  if (o.stride < 1 || o.dilation < 1 || o.padding < 0)
    throw ArgumentError("conv1d: stride and dilation must be >= 1 and padding >= 0");
  Conv2dOptions o2;
  o2.stride = {1, o.stride};
  o2.padding = {0, o.padding};
  o2.dilation = {1, o.dilation};
  o2.groups = o.groups;
  auto y = conv2d<B>(x.template unsqueeze<4>(2), weight.template unsqueeze<4>(2), bias, o2);
  return y.template squeeze<3>(2);
}

template <Backend B>
std::pair<Tensor<B, 4>, Tensor<B, 4, Int>> max_pool2d_with_indices(const Tensor<B, 4>& x, const Pool2dOptions& o) {
  checks::pool2d("max_pool2d", x.shape(), o);
  auto r = B::max_pool2d(x.primitive(), o);
  return {Tensor<B, 4>(std::move(r.output)), Tensor<B, 4, Int>(std::move(r.indices))};
}

template <Backend B>
Tensor<B, 4> max_pool2d(const Tensor<B, 4>& x, const Pool2dOptions& o) {
  return max_pool2d_with_indices<B>(x, o).first;
}

template <Backend B>
Tensor<B, 4> avg_pool2d(const Tensor<B, 4>& x, const Pool2dOptions& o) {
  if (o.dilation[0] != 1 || o.dilation[1] != 1) throw ArgumentError("avg_pool2d: dilation is not supported");
  checks::pool2d("avg_pool2d", x.shape(), o);
  return Tensor<B, 4>(B::avg_pool2d(x.primitive(), o));
}

template <Backend B>
Tensor<B, 4> adaptive_avg_pool2d(const Tensor<B, 4>& x, std::array<int64_t, 2> out_hw) {
  const Shape s = x.shape();
  if (out_hw[0] < 1 || out_hw[1] < 1)
    throw ArgumentError("adaptive_avg_pool2d: output size must be positive, got [" + std::to_string(out_hw[0]) +
                        ", " + std::to_string(out_hw[1]) + "]");
  if (s[2] == 0 || s[3] == 0) throw ShapeError("adaptive_avg_pool2d: empty input " + s.to_string());
  return Tensor<B, 4>(B::adaptive_avg_pool2d(x.primitive(), out_hw));
}

}  // namespace ember
