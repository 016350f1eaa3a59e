#pragma once
// PReLU (PyTorch nn.PReLU): y = max(0, x) + weight * min(0, x), with a learnable weight of num_parameters
// elements (1, shared by all elements, or one per channel), initialized to 0.25. The channel dim is dim 1 when the
// input rank is >= 2; a rank-1 input has no channel dim, so it needs num_parameters == 1 (as in PyTorch).
#include <fmt/format.h>

#include "engine/module/traversal.hpp"
#include "engine/nn/init.hpp"
#include "engine/nn/shape_util.hpp"

namespace ember::nn {

template <Backend B>
struct PReLU {
  BOOST_HANA_DEFINE_STRUCT(PReLU, (Param<Tensor<B, 1>>, weight));

  int64_t num_parameters() const { return weight.shape()[0]; }

  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    const int64_t n = num_parameters();
    std::array<int64_t, D> ws;
    ws.fill(1);
    if (n != 1) {
      if (D < 2 || x.dim(1) != n)
        throw ShapeError(fmt::format("PReLU: {} parameters need an input with {} channels in dim 1, got {}", n, n,
                                     x.shape().to_string()));
      ws[1] = n;
    }
    return x.clamp_min(0.0).add(weight.val().reshape(ws).mul(x.clamp_max(0.0)));
  }
};

struct PReLUConfig {
  int64_t num_parameters = 1;
  double init_value = 0.25;  // PyTorch's `init` argument (renamed: init() is the factory)

  template <Backend B>
  PReLU<B> init(const typename B::Device& device = {}) const {
    detail::require_positive("PReLUConfig", "num_parameters", num_parameters);
    PReLU<B> m;
    m.weight =
        lazy_param<Tensor<B, 1>>(nn::init::Constant{init_value}, std::array<int64_t, 1>{num_parameters}, {}, device);
    return m;
  }
};

}  // namespace ember::nn
