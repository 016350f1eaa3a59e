#pragma once
// RMSNorm over the last dim (PyTorch 2.4's nn.RMSNorm(normalized_shape, eps, elementwise_affine); PyTorch 1.13 has
// none): y = x / sqrt(mean(x^2) + eps) * weight. eps unset means the machine epsilon of the input's float type, as
// PyTorch's eps=None. weight starts at ones and is absent when elementwise_affine is false. Named weight as
// PyTorch's state_dict.
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "engine/module/traversal.hpp"
#include "engine/nn/init.hpp"
#include "engine/nn/shape_util.hpp"

namespace ember::nn {

template <Backend B>
struct RMSNorm {
  BOOST_HANA_DEFINE_STRUCT(RMSNorm, (std::optional<Param<Tensor<B, 1>>>, weight), (int64_t, normalized_shape),
                           (std::optional<double>, epsilon));

  double eps() const {
    return epsilon ? *epsilon : static_cast<double>(std::numeric_limits<typename B::FloatElem>::epsilon());
  }

  // x [..., normalized_shape] -> same shape.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    if (x.dim(-1) != normalized_shape)
      throw ShapeError(fmt::format("RMSNorm: input {} has last dim {}, expected {}", x.shape().to_string(), x.dim(-1),
                                   normalized_shape));
    auto y = x.div(x.mul(x).mean_dim(-1).add_scalar(eps()).sqrt());
    if (weight) y = y.mul(weight->val().reshape(detail::one_hot_shape<D>(normalized_shape, D - 1)));
    return y;
  }
};

struct RMSNormConfig {
  int64_t normalized_shape = 0;
  std::optional<double> epsilon;  // unset: the input float type's machine epsilon
  bool elementwise_affine = true;

  template <Backend B>
  RMSNorm<B> init(const typename B::Device& device = {}) const {
    detail::require_positive("RMSNormConfig", "normalized_shape", normalized_shape);
    if (epsilon && !(*epsilon >= 0)) throw ArgumentError("RMSNormConfig: epsilon must be >= 0");
    RMSNorm<B> m;
    if (elementwise_affine)
      m.weight = lazy_param<Tensor<B, 1>>(init::Ones{}, std::array<int64_t, 1>{normalized_shape}, {}, device);
    m.normalized_shape = normalized_shape;
    m.epsilon = epsilon;
    return m;
  }
};

}  // namespace ember::nn
