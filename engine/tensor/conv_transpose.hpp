#pragma once
// conv_transpose2d on tensors (PyTorch's F.conv_transpose2d): x [N, C_in, H, W], weight [C_in, C_out / groups, kH,
// kW], optional bias [C_out] -> [N, C_out, H_out, W_out] with
//   H_out = (H - 1) * stride - 2 * padding + dilation * (kH - 1) + output_padding + 1.
// Composed from conv2d / conv2d_backward on every backend (engine/backend/conv_transpose.hpp); Autodiff records it as
// one op.
#include <optional>

#include <fmt/format.h>

#include "engine/backend/conv_transpose.hpp"
#include "engine/tensor/checks.hpp"
#include "engine/tensor/tensor.hpp"

namespace ember {

namespace checks {

inline Shape conv_transpose2d(const Shape& x, const Shape& w, const Shape* bias, const ConvTranspose2dOptions& o) {
  const std::string args = fmt::format("(input {}, weight {})", x.to_string(), w.to_string());
  if (x.rank() != 4 || w.rank() != 4)
    throw ShapeError(fmt::format("conv_transpose2d: input and weight must be 4-D {}", args));
  for (int i = 0; i < 2; ++i) {
    if (o.stride[i] > kMaxOption || o.padding[i] > kMaxOption || o.dilation[i] > kMaxOption ||
        o.output_padding[i] > kMaxOption || w[2 + i] > kMaxOption)
      throw ArgumentError(
          fmt::format("conv_transpose2d: kernel, stride, padding and dilation must be at most 2^31 {}", args));
    if (o.stride[i] < 1 || o.dilation[i] < 1 || o.padding[i] < 0 || o.output_padding[i] < 0)
      throw ArgumentError(fmt::format(
          "conv_transpose2d: stride and dilation must be >= 1, padding and output_padding >= 0 {}", args));
    // PyTorch's rule: otherwise the extra rows would lie past every kernel window's reach.
    if (o.output_padding[i] >= std::max(o.stride[i], o.dilation[i]))
      throw ArgumentError(fmt::format("conv_transpose2d: output_padding {} must be smaller than either stride {} or "
                                      "dilation {} {}",
                                      o.output_padding[i], o.stride[i], o.dilation[i], args));
  }
  if (o.groups < 1 || o.groups > kMaxOption || w[0] % o.groups)
    throw ArgumentError(fmt::format("conv_transpose2d: groups {} must divide the weight's first dim {}", o.groups, args));
  if (x[1] != w[0])
    throw ShapeError(fmt::format("conv_transpose2d: weight expects {} input channels {}", w[0], args));
  const int64_t c_out = w[1] * o.groups;
  if (bias && (bias->rank() != 1 || (*bias)[0] != c_out))
    throw ShapeError(fmt::format("conv_transpose2d: bias {} must be [{}] {}", bias->to_string(), c_out, args));
  if (x[2] < 1 || x[3] < 1 || w[2] < 1 || w[3] < 1)
    throw ShapeError(fmt::format("conv_transpose2d: empty input or kernel {}", args));
  for (int i = 0; i < 2; ++i) {
    // Computed wide first: a huge input dim times a huge stride must be refused, not overflow.
    const __int128 n = static_cast<__int128>(x[2 + i] - 1) * o.stride[i] - 2 * static_cast<__int128>(o.padding[i]) +
                       static_cast<__int128>(o.dilation[i]) * (w[2 + i] - 1) + o.output_padding[i] + 1;
    if (n > kMaxOption * kMaxOption)
      throw ShapeError(fmt::format("conv_transpose2d: the output would be too large {}", args));
  }
  const Shape out = conv_transpose::output_shape(x, w, o);
  if (out[2] < 1 || out[3] < 1)
    throw ShapeError(fmt::format("conv_transpose2d: output size [{}, {}] is too small {}", out[2], out[3], args));
  return out;
}

}  // namespace checks

template <Backend B>
Tensor<B, 4> conv_transpose2d(const Tensor<B, 4>& x, const Tensor<B, 4>& weight,
                              const std::optional<Tensor<B, 1>>& bias, const ConvTranspose2dOptions& o = {}) {
  const Shape bs = bias ? bias->shape() : Shape{};
  checks::conv_transpose2d(x.shape(), weight.shape(), bias ? &bs : nullptr, o);
  const typename B::FloatPrimitive* bp = bias ? &bias->primitive() : nullptr;
  if constexpr (detail::HasGradTracking<B>)
    return Tensor<B, 4>(B::conv_transpose2d(x.primitive(), weight.primitive(), bp, o));
  else
    return Tensor<B, 4>(conv_transpose::forward<B>(x.primitive(), weight.primitive(), bp, o));
}

}  // namespace ember
