#pragma once
// Optimizers over a runtime Sequential (sequential.hpp), for the C ABI: the engine's Sgd / Adam / AdamW, a
// gradient accumulator for the pending gradients (PyTorch's .grad between backward and step), and the module they
// update, kept alive by shared ownership.
#include <memory>
#include <mutex>

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
// One alternative per compiled backend.
#if EMBER_HAS_VULKAN
using DynOptimizer = std::variant<BackendOptimizer<CpuAd>, BackendOptimizer<VulkanAd>>;
#else
using DynOptimizer = std::variant<BackendOptimizer<CpuAd>>;
#endif

// Lock order: the optimizer's mutex, then the module's. Steps hold both, so an optimizer serializes its own calls.
struct OptimizerState {
  std::shared_ptr<ModuleState> module;
  double lr = 1e-3;
  DynOptimizer opt;
  std::mutex mu;
};

std::shared_ptr<OptimizerState> make_optimizer(std::shared_ptr<ModuleState> module, const OptimSpec& spec);
void accumulate(OptimizerState& o, const DynGrads& grads);
void step(OptimizerState& o, const DynGrads* grads);
void zero_grad(OptimizerState& o);
void reset(OptimizerState& o);
void set_lr(OptimizerState& o, double lr);
double get_lr(OptimizerState& o);
Record optimizer_record(OptimizerState& o);
// Validates against the module's params; a failure changes nothing.
void load_optimizer_record(OptimizerState& o, const Record& r);

}  // namespace ember::capi
