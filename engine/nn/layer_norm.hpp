#pragma once
// LayerNorm over the last dim (PyTorch's nn.LayerNorm(d_model)): y = (x - mean) / sqrt(var + eps) * gamma + beta
// with the biased variance. gamma starts at ones, beta at zeros. Named gamma/beta as in Burn (PyTorch: weight/bias).
#include <fmt/format.h>

#include "engine/backend/optional_ops.hpp"
#include "engine/module/traversal.hpp"
#include "engine/nn/init.hpp"
#include "engine/nn/shape_util.hpp"

namespace ember::nn {

template <Backend B>
struct LayerNorm {
  BOOST_HANA_DEFINE_STRUCT(LayerNorm, (Param<Tensor<B, 1>>, gamma), (Param<Tensor<B, 1>>, beta), (double, epsilon));

  int64_t d_model() const { return gamma.shape()[0]; }

  // x [..., d_model] -> same shape.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    const int64_t d = d_model();
    if (x.dim(-1) != d)
      throw ShapeError(
          fmt::format("LayerNorm: input {} has last dim {}, expected {}", x.shape().to_string(), x.dim(-1), d));
    // One op (optional_ops.hpp HasFusedLayerNorm): the backend's fused row kernel where it has one, the composed
    // mean / centre / variance / scale otherwise; Autodiff records it as one node either way.
    return Tensor<B, D>(optional_ops::float_layer_norm<B>(x.primitive(), gamma.val().primitive(),
                                                          beta.val().primitive(), epsilon)
                            .out);
  }
};

struct LayerNormConfig {
  int64_t d_model = 0;
  double epsilon = 1e-5;

  template <Backend B>
  LayerNorm<B> init(const typename B::Device& device = {}) const {
    detail::require_positive("LayerNormConfig", "d_model", d_model);
    if (!(epsilon >= 0)) throw ArgumentError("LayerNormConfig: epsilon must be >= 0");
    LayerNorm<B> m;
    m.gamma = lazy_param<Tensor<B, 1>>(init::Ones{}, std::array<int64_t, 1>{d_model}, {}, device);
    m.beta = lazy_param<Tensor<B, 1>>(init::Zeros{}, std::array<int64_t, 1>{d_model}, {}, device);
    m.epsilon = epsilon;
    return m;
  }
};

}  // namespace ember::nn
