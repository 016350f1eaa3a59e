#pragma once
// Upsample (torch.nn.Upsample): interpolate with fixed options over NCHW input (nearest or bilinear; size or
// scale_factor; align_corners for bilinear). No params: a plain struct with a templated forward.
#include <optional>

#include "engine/tensor/shape_ops_tensor.hpp"

namespace ember::nn {

struct Upsample {
  InterpolateOptions options;
  template <Backend B>
  Tensor<B, 4> forward(const Tensor<B, 4>& x) const {
    return interpolate<B>(x, options);
  }
};

// torch.nn.Upsample(size=None, scale_factor=None, mode='nearest', align_corners=None): exactly one of size and
// scale_factor; align_corners only with bilinear.
struct UpsampleConfig {
  std::optional<std::array<int64_t, 2>> size = std::nullopt;
  std::optional<std::array<double, 2>> scale_factor = std::nullopt;
  InterpolateMode mode = InterpolateMode::Nearest;
  bool align_corners = false;
  Upsample init() const {
    Upsample m{{size, scale_factor, mode, align_corners}};
    shape_ops::check_interpolate_options(m.options);
    return m;
  }
};

}  // namespace ember::nn
