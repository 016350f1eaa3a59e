#pragma once
// conv_transpose2d (PyTorch's ConvTranspose2d / F.conv_transpose2d) on backend primitives, with no kernel of its own.
//
// A transposed convolution is the adjoint of a convolution: with conv(z; w) mapping an image z of the transposed
// conv's output shape to one of its input shape, conv_transpose(u; w) = conv^T(u; w), which is exactly what
// conv2d_backward computes as the input gradient for an upstream gradient u. Its own backward then needs
//   du = conv(gz; w)                     (conv2d's forward) and
//   dw = conv2d_backward(gz, w, u).weight  (the weight gradient of conv(gz; w) for upstream u),
// so every backend that has conv2d and conv2d_backward (CPU, Vulkan, CUDA) runs it, groups and dilation included.
// The weight is PyTorch's transposed layout [C_in, C_out / groups, kH, kW], which is conv2d's [C_out', C_in' /
// groups, ...] for the adjoint conv (C_out' = C_in, C_in' = C_out): no permute.
//
// output_padding adds rows / columns at the bottom / right of the output. When it reaches the stride (PyTorch allows
// output_padding < max(stride, dilation)), the adjoint conv over that output gives floor(output_padding / stride)
// more rows than u has; u is padded with zero rows there (they contribute nothing) so the shapes agree.
#include <array>
#include <optional>
#include <vector>

#include "engine/backend/backend.hpp"

namespace ember {

struct ConvTranspose2dOptions {
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> output_padding{0, 0};
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
};

namespace conv_transpose {

inline Conv2dOptions adjoint_conv(const ConvTranspose2dOptions& o) {
  Conv2dOptions c;
  c.stride = o.stride;
  c.padding = o.padding;
  c.dilation = o.dilation;
  c.groups = o.groups;
  return c;
}

// The output's spatial size along axis i (0: H, 1: W) for an input of size n and a kernel of size k.
inline int64_t out_size(int64_t n, int64_t k, const ConvTranspose2dOptions& o, int i) {
  return (n - 1) * o.stride[i] - 2 * o.padding[i] + o.dilation[i] * (k - 1) + o.output_padding[i] + 1;
}

// x [N, C_in, H, W], w [C_in, C_out / groups, kH, kW] (already validated) -> [N, C_out, H_out, W_out].
inline Shape output_shape(const Shape& x, const Shape& w, const ConvTranspose2dOptions& o) {
  return Shape{x[0], w[1] * o.groups, out_size(x[2], w[2], o, 0), out_size(x[3], w[3], o, 1)};
}

// u padded with zero rows / columns to the adjoint conv's output size (see the header comment).
template <Backend B>
typename B::FloatPrimitive pad_to_adjoint(const typename B::FloatPrimitive& u, const ConvTranspose2dOptions& o) {
  auto p = u;
  for (int i = 0; i < 2; ++i) {
    const int64_t extra = o.output_padding[i] / o.stride[i];
    if (extra == 0) continue;
    Shape zs = B::template shape<Float>(p);
    zs.dims[2 + i] = extra;
    auto zeros = B::template full<Float>(zs, 0.0, B::template device<Float>(p));
    p = B::template cat<Float>(std::vector<typename B::FloatPrimitive>{p, zeros}, 2 + i);
  }
  return p;
}

template <Backend B>
typename B::FloatPrimitive forward(const typename B::FloatPrimitive& x, const typename B::FloatPrimitive& w,
                                   const typename B::FloatPrimitive* bias, const ConvTranspose2dOptions& o) {
  const Shape out = output_shape(B::template shape<Float>(x), B::template shape<Float>(w), o);
  // conv2d_backward reads its input only for the weight gradient (discarded here) and its shape.
  const auto z = B::template full<Float>(out, 0.0, B::template device<Float>(x));
  auto y = B::conv2d_backward(z, w, pad_to_adjoint<B>(x, o), false, adjoint_conv(o)).input;
  if (!bias) return y;
  return B::float_binary(y, B::template reshape<Float>(*bias, Shape{1, out[1], 1, 1}), BinaryOp::Add);
}

template <class FP>
struct Grads {
  std::optional<FP> input, weight, bias;
};

// Gradients of forward(x, w, bias) for the output gradient g; only those asked for are computed.
template <Backend B>
Grads<typename B::FloatPrimitive> backward(const typename B::FloatPrimitive& x,
                                                 const typename B::FloatPrimitive& w,
                                                 const typename B::FloatPrimitive& g, bool need_input,
                                                 bool need_weight, bool need_bias, const ConvTranspose2dOptions& o) {
  using FP = typename B::FloatPrimitive;
  const Shape xs = B::template shape<Float>(x);
  const Conv2dOptions c = adjoint_conv(o);
  Grads<FP> r;
  if (need_input) {
    FP gx = B::conv2d(g, w, nullptr, c);
    if (!(B::template shape<Float>(gx) == xs))  // drop the zero rows pad_to_adjoint added
      gx = B::template slice<Float>(gx, std::vector<Range>{{0, xs[0]}, {0, xs[1]}, {0, xs[2]}, {0, xs[3]}});
    r.input = std::move(gx);
  }
  if (need_weight) r.weight = B::conv2d_backward(g, w, pad_to_adjoint<B>(x, o), false, c).weight;
  if (need_bias) {
    FP gb = g;
    for (std::size_t d : {0u, 2u, 3u}) gb = B::float_reduce(gb, ReduceOp::Sum, d);
    r.bias = B::template reshape<Float>(gb, Shape{B::template shape<Float>(g)[1]});
  }
  return r;
}

}  // namespace conv_transpose
}  // namespace ember
