#pragma once
// Optimizers over a runtime Sequential (sequential.hpp), for the C ABI: the engine's Sgd / Adam / AdamW, a
// gradient accumulator for the pending gradients (PyTorch's .grad between backward and step), and the module they
// update, kept alive by shared ownership.
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>

#include "c_api/src/runtime/sequential.hpp"
#include "engine/optim/optim.hpp"

namespace ember::capi {

enum class OptimKind : int32_t { Sgd = 0, Adam = 1, AdamW = 2 };

struct OptimSpec {
  OptimKind kind = OptimKind::Adam;
  double lr = 1e-3;
  SgdConfig sgd;
  AdamConfig adam;  // AdamW uses the same fields with decoupled weight decay
};

template <class B>
struct BackendOptimizer {
  using Backend = B;
  std::variant<Sgd<B>, Adam<B>, AdamW<B>> opt;
  GradientsAccumulator<B> pending{AccumulateMode::Add};
};
// The engine optimizer of spec's kind: the one switch over OptimKind, for module and param-list optimizers alike.
template <class B>
BackendOptimizer<B> make_backend_optimizer(const OptimSpec& spec) {
  switch (spec.kind) {
    case OptimKind::Sgd: return BackendOptimizer<B>{Sgd<B>(spec.sgd)};
    case OptimKind::Adam: return BackendOptimizer<B>{Adam<B>(spec.adam)};
    case OptimKind::AdamW:
      return BackendOptimizer<B>{
          AdamW<B>(AdamWConfig{spec.adam.beta1, spec.adam.beta2, spec.adam.eps, spec.adam.weight_decay})};
  }
  throw ArgumentError("optimizer: unknown kind " + std::to_string(static_cast<int32_t>(spec.kind)));
}
// A BackendOptimizer<B> of the module's runtime (type-erased: only that runtime reads it).
struct DynOptimizer {
  std::shared_ptr<void> payload;
};
template <class B, class F>
decltype(auto) visit_backend(F&& f, DynOptimizer& o) {
  return f(*static_cast<BackendOptimizer<B>*>(o.payload.get()));
}

// A param group's engine optimizer (ember_optimizer_create_params; param_optimizer.cpp): a BackendOptimizer<B> of
// the params' runtime, stepping them as a list of flat params named by their index in the group.
struct DynGroupOptimizer {
  const BackendRuntime* runtime = nullptr;
  std::shared_ptr<void> payload;
};
template <class B, class F>
decltype(auto) visit_backend(F&& f, DynGroupOptimizer& o) {
  return f(*static_cast<BackendOptimizer<B>*>(o.payload.get()));
}
// One param of a group step: its current value (replaced by the updated one when it had a gradient), its
// gradient, the id keying its state, and its multipliers.
struct GroupParam {
  DynTensor value;
  std::optional<DynTensor> grad;
  uint64_t id = 0;
  double lr_mult = 1.0, wd_mult = 1.0;
};

struct ParamOptimizer;  // param_optimizer.hpp (c_api/src): an optimizer over the caller's param handles

// Lock order: the optimizer's mutex, then the module's. Steps hold both, so an optimizer serializes its own calls.
struct OptimizerState {
  std::shared_ptr<ModuleState> module;  // null for an optimizer over a param list
  std::shared_ptr<ParamOptimizer> params;  // set for an optimizer over a param list (then module and opt are unset)
  double lr = 1e-3;
  DynOptimizer opt;
  std::mutex mu;
};

// The runtime's optimizer functions are op_list.hpp's EMBER_RUNTIME_OPTIMIZER_OPS (declared in tensor_ops.hpp;
// load_optimizer_record validates against the module's params, and a failure changes nothing). The learning rate
// is the same for every backend:
inline void check_lr(double lr) {
  if (!(lr >= 0) || !std::isfinite(lr))
    throw ArgumentError("optimizer: lr must be finite and >= 0, got " + std::to_string(lr));
}
void set_lr(OptimizerState& o, double lr);
double get_lr(OptimizerState& o);

}  // namespace ember::capi
