// Optimizers for runtime Sequentials: the engine's optimizers stepping a Sequential<B> through the traversal
// overloads of sequential.hpp.
#include "c_api/src/runtime/optimizer.hpp"

#include "c_api/src/runtime/backend_ops.hpp"

namespace ember::capi {
namespace {

// f(BackendOptimizer<B>&, Sequential<B>&) for the optimizer's backend and its module (always the same backend:
// the optimizer is built for the module's).
template <class B, class F>
decltype(auto) with_both(OptimizerState& o, F&& f) {
  return visit_backend<B>(
      [&](auto& opt) -> decltype(auto) {
        return visit_backend<B>([&](auto& seq) -> decltype(auto) { return f(opt, seq); }, o.module->module);
      },
      o.opt);
}

template <class B>
GradientsParams<B> params_grads(const DynGrads& grads, const Sequential<B>& seq) {
  if (grads.runtime != &runtime_instance<B>())
    throw ArgumentError("optimizer: the gradients come from another backend than the module");
  return visit_backend<B>([&](const auto& g) { return GradientsParams<B>::from_grads(g.grads, seq); }, grads);
}

}  // namespace

namespace ops {

template <class B>
std::shared_ptr<OptimizerState> make_optimizer(std::shared_ptr<ModuleState> module, const OptimSpec& spec) {
  check_lr(spec.lr);
  if (module->runtime != &runtime_instance<B>()) throw ArgumentError("optimizer: the module is of another backend");
  auto o = std::make_shared<OptimizerState>();
  o->lr = spec.lr;
  o->opt = DynOptimizer{std::make_shared<BackendOptimizer<B>>(make_backend_optimizer<B>(spec))};
  o->module = std::move(module);
  return o;
}

template <class B>
void accumulate(OptimizerState& o, const DynGrads& grads) {
  std::lock_guard lock(o.mu);
  std::shared_lock mlock(o.module->mu);
  with_both<B>(o, [&](auto& opt, auto& seq) { opt.pending.accumulate(params_grads(grads, seq)); });
}

template <class B>
void step(OptimizerState& o, const DynGrads* grads) {
  std::lock_guard lock(o.mu);
  std::unique_lock mlock(o.module->mu);
  with_both<B>(o, [&](auto& opt, auto& seq) {
    // Copies until the step succeeded: a failed step (shape mismatch) keeps the pending gradients.
    auto pending = opt.pending;
    if (grads) pending.accumulate(params_grads(*grads, seq));
    const auto g = pending.take();
    // The step works on a copy (params share their tensors, so it is cheap): a step that throws halfway must not
    // leave the module moved-from.
    std::visit([&](auto& optimizer) { seq = optimizer.step(o.lr, seq, g); }, opt.opt);
    opt.pending.take();
  });
}

template <class B>
void zero_grad(OptimizerState& o) {
  std::lock_guard lock(o.mu);
  visit_backend<B>([](auto& opt) { opt.pending.take(); }, o.opt);
}

template <class B>
void reset(OptimizerState& o) {
  std::lock_guard lock(o.mu);
  visit_backend<B>([](auto& opt) { std::visit([](auto& optimizer) { optimizer.reset(); }, opt.opt); }, o.opt);
}

template <class B>
Record optimizer_record(OptimizerState& o) {
  std::lock_guard lock(o.mu);
  Record r = visit_backend<B>(
      [](auto& opt) { return std::visit([](auto& optimizer) { return optimizer.state(); }, opt.opt); }, o.opt);
  r.scalars["lr"] = o.lr;
  return r;
}

template <class B>
void load_optimizer_record(OptimizerState& o, const Record& r) {
  std::lock_guard lock(o.mu);
  std::shared_lock mlock(o.module->mu);
  Record state = r;
  std::optional<double> lr;
  if (auto it = state.scalars.find("lr"); it != state.scalars.end()) {
    check_lr(it->second);
    lr = it->second;
    state.scalars.erase(it);
  }
  with_both<B>(o, [&](auto& opt, auto& seq) {
    std::visit([&](auto& optimizer) { optimizer.load_state(state, seq); }, opt.opt);
  });
  if (lr) o.lr = *lr;
}

}  // namespace ops

EMBER_RUNTIME_OPTIMIZER_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
