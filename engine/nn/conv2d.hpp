#pragma once
// Conv2d over NCHW input (PyTorch's nn.Conv2d): weight [C_out, C_in / groups, kH, kW], optional bias [C_out].
// Weight layout matches PyTorch, so a state dict loads as is. Default init is PyTorch's: U(+-1/sqrt(fan_in)) for
// weight and bias with fan_in = C_in / groups * kH * kW.
#include <optional>

#include <fmt/format.h>

#include "engine/module/traversal.hpp"
#include "engine/nn/init.hpp"
#include "engine/nn/shape_util.hpp"
#include "engine/tensor/module_ops.hpp"

namespace ember::nn {

template <Backend B>
struct Conv2d {
  BOOST_HANA_DEFINE_STRUCT(Conv2d, (Param<Tensor<B, 4>>, weight), (std::optional<Param<Tensor<B, 1>>>, bias),
                           (Conv2dOptions, options));

  // x [N, C_in, H, W] -> [N, C_out, H_out, W_out].
  Tensor<B, 4> forward(const Tensor<B, 4>& x) const {
    std::optional<Tensor<B, 1>> b;
    if (bias) b = bias->val();
    return conv2d<B>(x, weight.val(), b, options);
  }
};

struct Conv2dConfig {
  int64_t in_channels = 0, out_channels = 0;
  std::array<int64_t, 2> kernel_size{1, 1};
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
  bool bias = true;
  Initializer initializer = torch_default_initializer();

  template <Backend B>
  Conv2d<B> init(const typename B::Device& device = {}) const {
    const char* who = "Conv2dConfig";
    detail::require_positive(who, "in_channels", in_channels);
    detail::require_positive(who, "out_channels", out_channels);
    detail::require_positive(who, "groups", groups);
    for (int i = 0; i < 2; ++i) {
      detail::require_positive(who, "kernel_size", kernel_size[i]);
      detail::require_positive(who, "stride", stride[i]);
      detail::require_positive(who, "dilation", dilation[i]);
      if (padding[i] < 0) throw ArgumentError("Conv2dConfig: padding must be >= 0");
    }
    if (in_channels % groups || out_channels % groups)
      throw ArgumentError(fmt::format("Conv2dConfig: in_channels {} and out_channels {} must be divisible by groups {}",
                                      in_channels, out_channels, groups));
    const int64_t k = kernel_size[0] * kernel_size[1];
    const Fans fans{in_channels / groups * k, out_channels / groups * k};
    Conv2d<B> m;
    m.weight = lazy_param<Tensor<B, 4>>(
        initializer, std::array<int64_t, 4>{out_channels, in_channels / groups, kernel_size[0], kernel_size[1]}, fans,
        device);
    if (bias) m.bias = lazy_param<Tensor<B, 1>>(initializer, std::array<int64_t, 1>{out_channels}, fans, device);
    m.options.stride = stride;
    m.options.padding = padding;
    m.options.dilation = dilation;
    m.options.groups = groups;
    return m;
  }
};

}  // namespace ember::nn
