#pragma once
// Conv1d over NCL input (PyTorch's nn.Conv1d): weight [C_out, C_in / groups, K], optional bias [C_out]. Same
// layout and default init as PyTorch (fan_in = C_in / groups * K).
#include <optional>

#include <fmt/format.h>

#include "engine/module/traversal.hpp"
#include "engine/nn/init.hpp"
#include "engine/nn/shape_util.hpp"
#include "engine/tensor/module_ops.hpp"

namespace ember::nn {

template <Backend B>
struct Conv1d {
  BOOST_HANA_DEFINE_STRUCT(Conv1d, (Param<Tensor<B, 3>>, weight), (std::optional<Param<Tensor<B, 1>>>, bias),
                           (Conv1dOptions, options));

  // x [N, C_in, L] -> [N, C_out, L_out].
  Tensor<B, 3> forward(const Tensor<B, 3>& x) const {
    std::optional<Tensor<B, 1>> b;
    if (bias) b = bias->val();
    return conv1d<B>(x, weight.val(), b, options);
  }
};

struct Conv1dConfig {
  int64_t in_channels = 0, out_channels = 0, kernel_size = 1;
  int64_t stride = 1, padding = 0, dilation = 1, groups = 1;
  bool bias = true;
  Initializer initializer = torch_default_initializer();

  template <Backend B>
  Conv1d<B> init(const typename B::Device& device = {}) const {
    const char* who = "Conv1dConfig";
    detail::require_positive(who, "in_channels", in_channels);
    detail::require_positive(who, "out_channels", out_channels);
    detail::require_positive(who, "kernel_size", kernel_size);
    detail::require_positive(who, "stride", stride);
    detail::require_positive(who, "dilation", dilation);
    detail::require_positive(who, "groups", groups);
    if (padding < 0) throw ArgumentError("Conv1dConfig: padding must be >= 0");
    if (in_channels % groups || out_channels % groups)
      throw ArgumentError(fmt::format("Conv1dConfig: in_channels {} and out_channels {} must be divisible by groups {}",
                                      in_channels, out_channels, groups));
    const Fans fans{in_channels / groups * kernel_size, out_channels / groups * kernel_size};
    Conv1d<B> m;
    m.weight = lazy_param<Tensor<B, 3>>(
        initializer, std::array<int64_t, 3>{out_channels, in_channels / groups, kernel_size}, fans, device);
    if (bias) m.bias = lazy_param<Tensor<B, 1>>(initializer, std::array<int64_t, 1>{out_channels}, fans, device);
    m.options = Conv1dOptions{stride, padding, dilation, groups};
    return m;
  }
};

}  // namespace ember::nn
