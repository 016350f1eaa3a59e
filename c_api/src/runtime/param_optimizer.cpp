// Param-list optimizers (ember_optimizer_create_params): each param group is one of the engine's Sgd / Adam / AdamW
// stepping a std::vector of flat params (named "0", "1", ... by their index in the group, which is what per-param
// options are keyed by), so the update math is exactly the typed engine's.
#include "c_api/src/runtime/optimizer.hpp"

#include <fmt/format.h>

#include "c_api/src/runtime/backend_ops.hpp"

namespace ember::capi {
namespace {

template <class B>
using FlatParam = Param<Tensor<B, 1>>;

template <class B>
BackendOptimizer<B>& group_of(DynGroupOptimizer& g) {
  if (g.runtime != &runtime_instance<B>()) throw ArgumentError("optimizer: a param group of another backend");
  return *static_cast<BackendOptimizer<B>*>(g.payload.get());
}

// The params as the engine's flat params (values shared, not copied), with their gradients.
template <class B>
std::vector<FlatParam<B>> flat_params(const std::vector<GroupParam>& params, GradientsParams<B>* grads) {
  using Inner = typename B::InnerBackend;
  std::vector<FlatParam<B>> list;
  list.reserve(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    const BackendTensor<B>& v = as_backend<B>(params[i].value, "optimizer");
    const auto& prim = float_of(v, fmt::format("optimizer: param {}", i));
    const Shape s = tensor_shape(v);
    const Shape flat{s.num_elements()};
    auto inner = Inner::template reshape<Float>(B::inner(prim), flat);
    list.push_back(FlatParam<B>::initialized(ParamId{params[i].id}, Tensor<B, 1>(B::from_inner(inner)), true));
    if (!grads || !params[i].grad) continue;
    const BackendTensor<B>& g = as_backend<B>(*params[i].grad, "optimizer");
    const auto& gp = float_of(g, fmt::format("optimizer: the gradient of param {}", i));
    const Shape gs = tensor_shape(g);
    if (!(gs == s))
      throw ShapeError(fmt::format("optimizer: the gradient of param {} has shape {}, the param has {}", i,
                                   gs.to_string(), s.to_string()));
    grads->put_flat(ParamId{params[i].id}, Tensor<Inner, 1>(Inner::template reshape<Float>(B::inner(gp), flat)), flat);
  }
  return list;
}

}  // namespace

namespace ops {

template <class B>
DynGroupOptimizer make_group_optimizer(const DynTensor& like, const OptimSpec& spec) {
  (void)as_backend<B>(like, "optimizer");
  check_lr(spec.lr);
  return DynGroupOptimizer{&runtime_instance<B>(),
                           std::make_shared<BackendOptimizer<B>>(make_backend_optimizer<B>(spec))};
}

template <class B>
void group_step(DynGroupOptimizer& g, std::vector<GroupParam>& params, double lr) {
  using Inner = typename B::InnerBackend;
  BackendOptimizer<B>& bo = group_of<B>(g);
  GradientsParams<B> grads;
  const auto list = flat_params<B>(params, &grads);
  std::vector<FlatParam<B>> next;
  std::visit(
      [&](auto& optimizer) {
        for (std::size_t i = 0; i < params.size(); ++i)
          optimizer.set_param_options(std::to_string(i), ParamOptions{params[i].lr_mult, params[i].wd_mult});
        next = optimizer.step(lr, list, grads);
      },
      bo.opt);
  // Only params that had a gradient changed; the others keep their tensor (and their graph leaf).
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (!params[i].grad) continue;
    const BackendTensor<B>& old = as_backend<B>(params[i].value, "optimizer");
    const auto& old_prim = std::get<0>(old.prim);
    auto value = B::from_inner(Inner::template reshape<Float>(B::inner(next[i].val().primitive()), tensor_shape(old)));
    if constexpr (detail::HasGradTracking<B>) value = B::float_require_grad(value, B::float_is_require_grad(old_prim));
    params[i].value = wrap<B, Float>(std::move(value));
  }
}

template <class B>
Record group_state(DynGroupOptimizer& g) {
  return std::visit([](const auto& optimizer) { return optimizer.state(); }, group_of<B>(g).opt);
}

template <class B>
void group_load_state(DynGroupOptimizer& g, const Record& r, const std::vector<GroupParam>& params) {
  const auto list = flat_params<B>(params, nullptr);
  std::visit([&](auto& optimizer) { optimizer.load_state(r, list); }, group_of<B>(g).opt);
}

template <class B>
void group_reset(DynGroupOptimizer& g) {
  std::visit([](auto& optimizer) { optimizer.reset(); }, group_of<B>(g).opt);
}

}  // namespace ops

EMBER_RUNTIME_PARAM_OPTIMIZER_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
