#pragma once
// BatchNorm1d ([N, C] or [N, C, L]) and BatchNorm2d ([N, C, H, W]) with PyTorch semantics:
//   training: normalize with the batch mean and the *biased* batch variance over every dim but the channel dim 1,
//             then update running_mean <- (1 - momentum) running_mean + momentum mean and
//                         running_var  <- (1 - momentum) running_var  + momentum var_unbiased (n / (n - 1) factor);
//   eval:     normalize with running_mean / running_var.
// gamma starts at ones, beta at zeros, running_mean at zeros, running_var at ones; momentum 0.1, eps 1e-5.
// running_mean / running_var are ParamRole::Buffer params: recorded and loaded, never trained.
//
// How forward updates the running statistics. Modules are values and forward is const (Sequential and user
// modules call it from their own const forward), so the running statistics are `mutable` members and a training
// forward assigns them `param.with_value(new_stats)`. Why this over the alternatives:
//   * returning std::pair<Tensor, BatchNorm> (or taking BatchNorm&) would make every container's forward - and
//     every user module holding a BatchNorm - non-const or tuple-returning, for one layer's side effect;
//   * writing through Param's shared state (Burn's RunningState) would make every copy of the module see the
//     update, which breaks value semantics (a copy taken before a step, e.g. an EMA or a checkpoint, would change).
// With `mutable` + with_value the update is visible on exactly the module object forward was called on, and the
// new stats are detached (buffers never join the autodiff graph), exactly like PyTorch's in-place buffer update.
// Consequence: a training-mode forward on one module object must not run concurrently with another use of that
// object (eval-mode forward writes nothing and is safe to share).
#include <fmt/format.h>

#include "engine/module/traversal.hpp"
#include "engine/nn/init.hpp"
#include "engine/nn/shape_util.hpp"

namespace ember::nn {

namespace detail {

// Mean over every dim except dim 1, keeping dims: [N, C, ...] -> [1, C, 1, ...].
template <Backend B, std::size_t D>
Tensor<B, D> mean_except_channel(Tensor<B, D> t) {
  for (std::size_t i = 0; i < D; ++i)
    if (i != 1) t = t.mean_dim(static_cast<int64_t>(i));  // equal-size groups: the mean of means is the mean
  return t;
}

template <class M, Backend B, std::size_t D>
Tensor<B, D> batch_norm_forward(const M& m, const Tensor<B, D>& x, const char* who) {
  const int64_t c = m.num_features();
  if (x.dim(1) != c)
    throw ShapeError(fmt::format("{}: input {} has {} channels (dim 1), expected {}", who, x.shape().to_string(),
                                 x.dim(1), c));
  const auto cs = one_hot_shape<D>(c, 1);
  const auto g = m.gamma.val().reshape(cs), b = m.beta.val().reshape(cs);
  if (!m.mode.training) {
    const auto mean = m.running_mean.val().reshape(cs), var = m.running_var.val().reshape(cs);
    return x.sub(mean).div(var.add_scalar(m.epsilon).sqrt()).mul(g).add(b);
  }
  const int64_t n = x.numel() / c;  // values per channel
  if (n <= 1)
    throw ShapeError(fmt::format("{}: expected more than 1 value per channel when training, got input {}", who,
                                 x.shape().to_string()));
  const auto mean = mean_except_channel(x);
  const auto centered = x.sub(mean);
  const auto var = mean_except_channel(centered.mul(centered));  // biased: used to normalize
  const auto y = centered.div(var.add_scalar(m.epsilon).sqrt()).mul(g).add(b);
  const std::array<int64_t, 1> flat{c};
  const double mom = m.momentum, unbias = static_cast<double>(n) / static_cast<double>(n - 1);
  m.running_mean = m.running_mean.with_value(
      m.running_mean.val().mul_scalar(1.0 - mom).add(mean.detach().reshape(flat).mul_scalar(mom)));
  m.running_var = m.running_var.with_value(
      m.running_var.val().mul_scalar(1.0 - mom).add(var.detach().reshape(flat).mul_scalar(mom * unbias)));
  return y;
}

template <class M, class Config, class Device>
M init_batch_norm(const Config& cfg, const Device& device, const char* who) {
  require_positive(who, "num_features", cfg.num_features);
  if (!(cfg.epsilon >= 0)) throw ArgumentError(fmt::format("{}: epsilon must be >= 0", who));
  if (!(cfg.momentum >= 0 && cfg.momentum <= 1)) throw ArgumentError(fmt::format("{}: momentum must be in [0, 1]", who));
  using T = typename decltype(M::gamma)::Value;
  const std::array<int64_t, 1> s{cfg.num_features};
  M m;
  m.gamma = lazy_param<T>(init::Ones{}, s, {}, device);
  m.beta = lazy_param<T>(init::Zeros{}, s, {}, device);
  m.running_mean = lazy_param<T>(init::Zeros{}, s, {}, device, ParamRole::Buffer);
  m.running_var = lazy_param<T>(init::Ones{}, s, {}, device, ParamRole::Buffer);
  m.momentum = cfg.momentum;
  m.epsilon = cfg.epsilon;
  m.mode.training = true;
  return m;
}

}  // namespace detail

template <Backend B>
struct BatchNorm1d {
  BOOST_HANA_DEFINE_STRUCT(BatchNorm1d, (Param<Tensor<B, 1>>, gamma), (Param<Tensor<B, 1>>, beta),
                           (mutable Param<Tensor<B, 1>>, running_mean), (mutable Param<Tensor<B, 1>>, running_var),
                           (double, momentum), (double, epsilon), (TrainingFlag, mode));

  int64_t num_features() const { return gamma.shape()[0]; }
  // x [N, C] or [N, C, L]. In training mode this also updates running_mean / running_var (see the header).
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    static_assert(D == 2 || D == 3, "BatchNorm1d takes [N, C] or [N, C, L]");
    return detail::batch_norm_forward(*this, x, "BatchNorm1d");
  }
};

template <Backend B>
struct BatchNorm2d {
  BOOST_HANA_DEFINE_STRUCT(BatchNorm2d, (Param<Tensor<B, 1>>, gamma), (Param<Tensor<B, 1>>, beta),
                           (mutable Param<Tensor<B, 1>>, running_mean), (mutable Param<Tensor<B, 1>>, running_var),
                           (double, momentum), (double, epsilon), (TrainingFlag, mode));

  int64_t num_features() const { return gamma.shape()[0]; }
  // x [N, C, H, W]. In training mode this also updates running_mean / running_var (see the header).
  Tensor<B, 4> forward(const Tensor<B, 4>& x) const { return detail::batch_norm_forward(*this, x, "BatchNorm2d"); }
};

struct BatchNorm1dConfig {
  int64_t num_features = 0;
  double epsilon = 1e-5, momentum = 0.1;
  template <Backend B>
  BatchNorm1d<B> init(const typename B::Device& device = {}) const {
    return detail::init_batch_norm<BatchNorm1d<B>>(*this, device, "BatchNorm1dConfig");
  }
};

struct BatchNorm2dConfig {
  int64_t num_features = 0;
  double epsilon = 1e-5, momentum = 0.1;
  template <Backend B>
  BatchNorm2d<B> init(const typename B::Device& device = {}) const {
    return detail::init_batch_norm<BatchNorm2d<B>>(*this, device, "BatchNorm2dConfig");
  }
};

}  // namespace ember::nn
