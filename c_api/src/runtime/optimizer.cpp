// Optimizers for runtime Sequentials: the engine's optimizers stepping a Sequential<B> through the traversal
// overloads of sequential.hpp.
#include "c_api/src/runtime/optimizer.hpp"

#include <cmath>

namespace ember::capi {
namespace {

void check_lr(double lr) {
  if (!(lr >= 0) || !std::isfinite(lr)) throw ArgumentError("optimizer: lr must be finite and >= 0, got " + std::to_string(lr));
}

// f(BackendOptimizer<B>&, Sequential<B>&) for the optimizer's backend and its module (always the same backend:
// the optimizer is built for the module's).
template <class F>
decltype(auto) with_both(OptimizerState& o, F&& f) {
  return std::visit(
      [&](auto& opt) -> decltype(auto) {
        using B = typename std::decay_t<decltype(opt)>::Backend;
        return f(opt, std::get<Sequential<B>>(o.module->module));
      },
      o.opt);
}

template <class B>
GradientsParams<B> params_grads(const DynGrads& grads, const Sequential<B>& seq) {
  const auto* g = std::get_if<BackendGrads<B>>(&grads);
  if (!g) throw ArgumentError("optimizer: the gradients come from another backend than the module");
  return GradientsParams<B>::from_grads(g->grads, seq);
}

}  // namespace

std::shared_ptr<OptimizerState> make_optimizer(std::shared_ptr<ModuleState> module, const OptimSpec& spec) {
  check_lr(spec.lr);
  auto o = std::make_shared<OptimizerState>();
  o->lr = spec.lr;
  o->opt = std::visit(
      [&](const auto& seq) -> DynOptimizer {
        using B = typename std::decay_t<decltype(seq)>::Backend;
        switch (spec.kind) {
          case OptimKind::Sgd: return BackendOptimizer<B>{Sgd<B>(spec.sgd)};
          case OptimKind::Adam: return BackendOptimizer<B>{Adam<B>(spec.adam)};
          case OptimKind::AdamW:
            return BackendOptimizer<B>{AdamW<B>(AdamWConfig{spec.adam.beta1, spec.adam.beta2, spec.adam.eps,
                                                            spec.adam.weight_decay})};
        }
        throw ArgumentError("optimizer: unknown kind " + std::to_string(static_cast<int32_t>(spec.kind)));
      },
      module->module);
  o->module = std::move(module);
  return o;
}

void accumulate(OptimizerState& o, const DynGrads& grads) {
  std::lock_guard lock(o.mu);
  std::shared_lock mlock(o.module->mu);
  with_both(o, [&](auto& opt, auto& seq) { opt.pending.accumulate(params_grads(grads, seq)); });
}

void step(OptimizerState& o, const DynGrads* grads) {
  std::lock_guard lock(o.mu);
  std::unique_lock mlock(o.module->mu);
  with_both(o, [&](auto& opt, auto& seq) {
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

void zero_grad(OptimizerState& o) {
  std::lock_guard lock(o.mu);
  std::visit([](auto& opt) { opt.pending.take(); }, o.opt);
}

void reset(OptimizerState& o) {
  std::lock_guard lock(o.mu);
  std::visit([](auto& opt) { std::visit([](auto& optimizer) { optimizer.reset(); }, opt.opt); }, o.opt);
}

void set_lr(OptimizerState& o, double lr) {
  check_lr(lr);
  std::lock_guard lock(o.mu);
  o.lr = lr;
}

double get_lr(OptimizerState& o) {
  std::lock_guard lock(o.mu);
  return o.lr;
}

Record optimizer_record(OptimizerState& o) {
  std::lock_guard lock(o.mu);
  Record r = std::visit([](auto& opt) { return std::visit([](auto& optimizer) { return optimizer.state(); }, opt.opt); },
                        o.opt);
  r.scalars["lr"] = o.lr;
  return r;
}

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
  with_both(o, [&](auto& opt, auto& seq) {
    std::visit([&](auto& optimizer) { optimizer.load_state(state, seq); }, opt.opt);
  });
  if (lr) o.lr = *lr;
}

}  // namespace ember::capi
