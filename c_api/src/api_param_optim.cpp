// ember.h: optimizers over param lists, param groups, per-param options, clipping (param_optimizer.hpp).
#include <fmt/format.h>

#include "c_api/src/param_optimizer.hpp"

using namespace ember;
using namespace ember::capi;

namespace ember::capi {
OptimSpec read_optimizer_options(const ember_optimizer_options* options);  // api_optim.cpp
}

extern "C" {

ember_status ember_optimizer_create_params(ember_tensor* const* params, size_t n, const ember_optimizer_options* options,
                                           ember_optimizer** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const OptimSpec spec = read_optimizer_options(options);
    o = make_handle<ember_optimizer>(make_param_optimizer(params, n, spec));
  });
}

ember_status ember_optimizer_add_param_group(ember_optimizer* optimizer, ember_tensor* const* params, size_t n,
                                             const ember_optimizer_options* options, size_t* group) {
  return guard(__func__, [&] {
    OptimizerState& o = *use(optimizer, "optimizer");
    if (!o.params) throw ArgumentError("param groups are for optimizers over a param list (ember_optimizer_create_params)");
    const OptimSpec spec = read_optimizer_options(options);
    const std::size_t g = add_param_group(o, params, n, spec);
    if (group) *group = g;
  });
}

ember_status ember_optimizer_group_count(const ember_optimizer* optimizer, size_t* count) {
  return guard(__func__, [&] {
    OptimizerState& o = *use(optimizer, "optimizer");
    out_value(count, "count") = group_count(o);
  });
}

ember_status ember_optimizer_set_group_lr(ember_optimizer* optimizer, size_t group, double lr) {
  return guard(__func__, [&] { set_group_lr(*use(optimizer, "optimizer"), group, lr); });
}

ember_status ember_optimizer_get_group_lr(const ember_optimizer* optimizer, size_t group, double* lr) {
  return guard(__func__, [&] {
    OptimizerState& o = *use(optimizer, "optimizer");
    out_value(lr, "lr") = get_group_lr(o, group);
  });
}

ember_status ember_optimizer_set_param_options(ember_optimizer* optimizer, const ember_tensor* param, double lr_mult,
                                               double wd_mult, int32_t grad_req) {
  return guard(__func__, [&] { set_param_options(*use(optimizer, "optimizer"), param, lr_mult, wd_mult, grad_req); });
}

ember_status ember_optimizer_clip_grad_norm(ember_optimizer* optimizer, double max_norm, double norm_type,
                                            double* total_norm) {
  return guard(__func__, [&] {
    OptimizerState& o = *use(optimizer, "optimizer");
    const double total = params_clip_grad_norm(o, max_norm, norm_type);
    if (total_norm) *total_norm = total;
  });
}

ember_status ember_clip_grad_norm(ember_tensor* const* params, size_t n, double max_norm, double norm_type,
                                  double* total_norm) {
  return guard(__func__, [&] {
    if (!params && n > 0) throw ArgumentError("params is NULL");
    std::vector<std::optional<DynTensor>> grads;
    for (size_t i = 0; i < n; ++i) grads.push_back(leaf_grad(use(params[i], fmt::format("params[{}]", i).c_str())));
    const double total = clip_grad_norm(grads, max_norm, norm_type);
    for (size_t i = 0; i < n; ++i)
      if (grads[i]) set_leaf_grad(use(params[i], "param"), &*grads[i]);
    if (total_norm) *total_norm = total;
  });
}

}  // extern "C"
