#pragma once
// ConvTranspose2d over NCHW input (PyTorch's nn.ConvTranspose2d): weight [C_in, C_out / groups, kH, kW], optional
// bias [C_out]. Weight layout and names match PyTorch's state_dict, so its weights load as they are. Default init is
// PyTorch's: U(+-1/sqrt(fan_in)) for weight and bias, where PyTorch computes fan_in from the weight's dim 1, i.e.
// C_out / groups * kH * kW.
#include <optional>

#include <fmt/format.h>

#include "engine/module/traversal.hpp"
#include "engine/nn/init.hpp"
#include "engine/nn/shape_util.hpp"
#include "engine/tensor/conv_transpose.hpp"

namespace ember::nn {

template <Backend B>
struct ConvTranspose2d {
  BOOST_HANA_DEFINE_STRUCT(ConvTranspose2d, (Param<Tensor<B, 4>>, weight), (std::optional<Param<Tensor<B, 1>>>, bias),
                           (ConvTranspose2dOptions, options));

  // x [N, C_in, H, W] -> [N, C_out, H_out, W_out].
  Tensor<B, 4> forward(const Tensor<B, 4>& x) const {
    std::optional<Tensor<B, 1>> b;
    if (bias) b = bias->val();
    return conv_transpose2d<B>(x, weight.val(), b, options);
  }
};

struct ConvTranspose2dConfig {
  int64_t in_channels = 0, out_channels = 0;
  std::array<int64_t, 2> kernel_size{1, 1};
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> output_padding{0, 0};
  int64_t groups = 1;
  bool bias = true;
  std::array<int64_t, 2> dilation{1, 1};
  Initializer initializer = torch_default_initializer();

  template <Backend B>
  ConvTranspose2d<B> init(const typename B::Device& device = {}) const {
    const char* who = "ConvTranspose2dConfig";
    detail::require_positive(who, "in_channels", in_channels);
    detail::require_positive(who, "out_channels", out_channels);
    detail::require_positive(who, "groups", groups);
    for (int i = 0; i < 2; ++i) {
      detail::require_positive(who, "kernel_size", kernel_size[i]);
      detail::require_positive(who, "stride", stride[i]);
      detail::require_positive(who, "dilation", dilation[i]);
      if (padding[i] < 0 || output_padding[i] < 0)
        throw ArgumentError("ConvTranspose2dConfig: padding and output_padding must be >= 0");
      if (output_padding[i] >= std::max(stride[i], dilation[i]))
        throw ArgumentError(fmt::format("ConvTranspose2dConfig: output_padding {} must be smaller than either stride "
                                        "{} or dilation {}",
                                        output_padding[i], stride[i], dilation[i]));
    }
    if (in_channels % groups || out_channels % groups)
      throw ArgumentError(fmt::format(
          "ConvTranspose2dConfig: in_channels {} and out_channels {} must be divisible by groups {}", in_channels,
          out_channels, groups));
    // PyTorch's _calculate_fan_in_and_fan_out reads dims 1 and 0 of the transposed weight.
    int64_t k = 0, fan_in = 0, fan_out = 0;
    if (__builtin_mul_overflow(kernel_size[0], kernel_size[1], &k) ||
        __builtin_mul_overflow(out_channels / groups, k, &fan_in) || __builtin_mul_overflow(in_channels, k, &fan_out))
      throw ArgumentError("ConvTranspose2dConfig: the weight would be too large");
    const Fans fans{fan_in, fan_out};
    ConvTranspose2d<B> m;
    m.weight = lazy_param<Tensor<B, 4>>(
        initializer, std::array<int64_t, 4>{in_channels, out_channels / groups, kernel_size[0], kernel_size[1]}, fans,
        device);
    if (bias) m.bias = lazy_param<Tensor<B, 1>>(initializer, std::array<int64_t, 1>{out_channels}, fans, device);
    m.options.stride = stride;
    m.options.padding = padding;
    m.options.output_padding = output_padding;
    m.options.dilation = dilation;
    m.options.groups = groups;
    return m;
  }
};

}  // namespace ember::nn
