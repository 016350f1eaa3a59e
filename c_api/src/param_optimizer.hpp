#pragma once
// Optimizers over any list of params (ember_optimizer_create_params), torch.optim style: param groups with their own
// lr and options, Gluon-style per-param lr_mult / wd_mult / grad_req, over the caller's tensor handles (held:
// tensor_refs.hpp), which each step updates in place (the same handles the caller's forward reads).
//
// Each group steps through the engine's own Sgd / Adam / AdamW (runtime/param_optimizer.cpp). Gradients come from
// ember_grads passed to accumulate / step, gathered per param with its grad_req: WRITE keeps the latest gradient,
// ADD sums them, NULL never updates the param. State records are keyed by the param's position in the optimizer
// (over all groups, in the order they were given): "<index>.exp_avg", "<index>.step", and "groups.<g>.lr".
#include <memory>
#include <optional>
#include <vector>

#include "c_api/src/boundary.hpp"

namespace ember::capi {

enum class GradReq : int32_t { Write = 0, Add = 1, Null = 2 };

struct OptParam {
  ember_tensor* handle = nullptr;  // held
  uint64_t id = 0;                 // keys the engine's state (ParamId)
  double lr_mult = 1.0, wd_mult = 1.0;
  GradReq req = GradReq::Write;
  std::optional<DynTensor> pending;  // gradients accumulated since the last step
};

struct OptGroup {
  OptimSpec spec;  // spec.lr is the group's current lr
  DynGroupOptimizer opt;
  std::vector<std::size_t> members;  // indices into ParamOptimizer::params
};

struct ParamOptimizer {
  std::vector<OptParam> params;
  std::vector<OptGroup> groups;
  ParamOptimizer() = default;
  ParamOptimizer(const ParamOptimizer&) = delete;
  ParamOptimizer& operator=(const ParamOptimizer&) = delete;
  ~ParamOptimizer();
};

std::shared_ptr<OptimizerState> make_param_optimizer(ember_tensor* const* params, std::size_t n, const OptimSpec& spec);
// ember_optimizer_create on a module tree: a param-list optimizer over the tree's TRAINABLE params, in path order.
std::shared_ptr<OptimizerState> make_tree_optimizer(const ModuleState& tree, const OptimSpec& spec);
// Adds a group (same validation as creation: live float leaves, not in the optimizer yet, one backend); its index.
std::size_t add_param_group(OptimizerState& o, ember_tensor* const* params, std::size_t n, const OptimSpec& spec);
void set_param_options(OptimizerState& o, const ember_tensor* param, double lr_mult, double wd_mult, int32_t req);

void params_accumulate(OptimizerState& o, const DynGrads& grads);
void params_step(OptimizerState& o, const DynGrads* grads);
void params_zero_grad(OptimizerState& o);
void params_reset(OptimizerState& o);
Record params_record(OptimizerState& o);
void params_load_record(OptimizerState& o, const Record& r);
// torch.nn.utils.clip_grad_norm_: the norm of all `grads` as one vector (norm_type > 0, may be infinite), and each
// scaled by max_norm / (total + 1e-6) when that is below 1; returns the total before clipping. Absent ones are skipped.
double clip_grad_norm(std::vector<std::optional<DynTensor>>& grads, double max_norm, double norm_type);
// clip_grad_norm over the pending gradients.
double params_clip_grad_norm(OptimizerState& o, double max_norm, double norm_type);

// Learning rates by group, for every optimizer (a module optimizer has one group).
std::size_t group_count(OptimizerState& o);
double get_group_lr(OptimizerState& o, std::size_t group);
void set_group_lr(OptimizerState& o, std::size_t group, double lr);

}  // namespace ember::capi
