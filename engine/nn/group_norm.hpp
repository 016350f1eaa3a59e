#pragma once
// GroupNorm (PyTorch's nn.GroupNorm(num_groups, num_channels, eps, affine)): x [N, C, *] is split into num_groups
// groups of C / num_groups channels; each (sample, group) is normalized by its own mean and biased variance, then
// scaled and shifted per channel: y = (x - mean) / sqrt(var + eps) * weight[c] + bias[c]. weight starts at ones,
// bias at zeros, and both are absent when affine is false. Named weight / bias as PyTorch's state_dict.
#include <optional>

#include <fmt/format.h>

#include "engine/module/traversal.hpp"
#include "engine/nn/init.hpp"
#include "engine/nn/shape_util.hpp"

namespace ember::nn {

template <Backend B>
struct GroupNorm {
  BOOST_HANA_DEFINE_STRUCT(GroupNorm, (std::optional<Param<Tensor<B, 1>>>, weight),
                           (std::optional<Param<Tensor<B, 1>>>, bias), (int64_t, num_groups),
                           (int64_t, num_channels), (double, epsilon));

  // x [N, C, *] (rank >= 2) -> same shape.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    static_assert(D >= 2, "GroupNorm: the input needs a batch and a channel dim");
    if (x.dim(1) != num_channels)
      throw ShapeError(fmt::format("GroupNorm: input {} has {} channels, expected {}", x.shape().to_string(),
                                   x.dim(1), num_channels));
    const auto dims = x.dims();
    // [N, G, C / G * spatial]: one row per (sample, group).
    const auto rows = x.template reshape<3>({dims[0], num_groups, -1});
    const auto centered = rows.sub(rows.mean_dim(-1));
    const auto var = centered.mul(centered).mean_dim(-1);  // biased, as PyTorch normalizes
    auto y = centered.div(var.add_scalar(epsilon).sqrt()).template reshape<D>(dims);
    const auto shape = detail::one_hot_shape<D>(num_channels, 1);
    if (weight) y = y.mul(weight->val().reshape(shape));
    if (bias) y = y.add(bias->val().reshape(shape));
    return y;
  }
};

struct GroupNormConfig {
  int64_t num_groups = 0;
  int64_t num_channels = 0;
  double epsilon = 1e-5;
  bool affine = true;

  template <Backend B>
  GroupNorm<B> init(const typename B::Device& device = {}) const {
    detail::require_positive("GroupNormConfig", "num_groups", num_groups);
    detail::require_positive("GroupNormConfig", "num_channels", num_channels);
    if (num_channels % num_groups)
      throw ArgumentError(fmt::format("GroupNormConfig: num_channels {} must be divisible by num_groups {}",
                                      num_channels, num_groups));
    if (!(epsilon >= 0)) throw ArgumentError("GroupNormConfig: epsilon must be >= 0");
    GroupNorm<B> m;
    if (affine) {
      m.weight = lazy_param<Tensor<B, 1>>(init::Ones{}, std::array<int64_t, 1>{num_channels}, {}, device);
      m.bias = lazy_param<Tensor<B, 1>>(init::Zeros{}, std::array<int64_t, 1>{num_channels}, {}, device);
    }
    m.num_groups = num_groups;
    m.num_channels = num_channels;
    m.epsilon = epsilon;
    return m;
  }
};

}  // namespace ember::nn
