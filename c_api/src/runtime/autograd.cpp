// Autodiff on runtime tensors: require grad, backward (optionally seeded), reading gradients, no-grad scopes.
#include <vector>

#include "c_api/src/runtime/tensor_ops.hpp"

namespace ember::capi {
namespace {

template <class B>
constexpr bool kTracks = detail::HasGradTracking<B>;

// This thread's open ember_no_grad_enter scopes: the flag each one found, restored by its exit. A plain array
// (not a vector) so the thread-local needs no destructor; scopes deeper than this are refused.
constexpr int kMaxNoGradDepth = 64;
thread_local bool t_saved[kMaxNoGradDepth];
thread_local int t_depth = 0;

}  // namespace

DynTensor set_requires_grad(const DynTensor& x, bool on) {
  return std::visit(
      [&](const auto& t) -> DynTensor {
        using B = typename std::decay_t<decltype(t)>::Backend;
        const auto& p = float_of(t, "set_requires_grad: tensor");
        if constexpr (kTracks<B>) return wrap<B, Float>(B::float_require_grad(p, on));
        else throw UnsupportedError("set_requires_grad: this backend does not record gradients");
      },
      x);
}

bool requires_grad(const DynTensor& x) {
  return std::visit(
      [&](const auto& t) -> bool {
        using B = typename std::decay_t<decltype(t)>::Backend;
        if (t.kind() != Kind::Float) return false;
        if constexpr (kTracks<B>) return B::float_is_require_grad(std::get<0>(t.prim));
        else return false;
      },
      x);
}

DynTensor detach(const DynTensor& x) {
  return std::visit(
      [&](const auto& t) -> DynTensor {
        using B = typename std::decay_t<decltype(t)>::Backend;
        if constexpr (kTracks<B>) {
          if (t.kind() == Kind::Float) return wrap<B, Float>(B::float_detach(std::get<0>(t.prim)));
        }
        return t;  // int and bool tensors are never tracked
      },
      x);
}

DynGrads backward(const DynTensor& x, const DynTensor* grad) {
  return std::visit(
      [&](const auto& t) -> DynGrads {
        using B = typename std::decay_t<decltype(t)>::Backend;
        const auto& p = float_of(t, "backward: tensor");
        if constexpr (kTracks<B>) {
          if (!grad) return BackendGrads<B>{B::backward(p)};
          const auto& g = float_of(same_backend<B>(*grad, t, "backward"), "backward: grad");
          const Shape ps = B::template shape<Float>(p), gs = B::template shape<Float>(g);
          if (!(ps == gs))
            throw ShapeError("backward: grad of shape " + gs.to_string() + " for a tensor of shape " + ps.to_string());
          // d/dx sum(x * detach(g)) = g: the seeded pass. Recorded even inside a no-grad scope (it is part of
          // backward, not of user code).
          const bool saved = autodiff::no_grad_flag();
          autodiff::no_grad_flag() = false;
          try {
            auto seeded = B::float_reduce_all(B::float_binary(p, B::float_detach(g), BinaryOp::Mul), ReduceOp::Sum);
            autodiff::no_grad_flag() = saved;
            return BackendGrads<B>{B::backward(seeded)};
          } catch (...) {
            autodiff::no_grad_flag() = saved;
            throw;
          }
        } else {
          throw UnsupportedError("backward: this backend does not record gradients");
        }
      },
      x);
}

std::optional<DynTensor> grad(const DynGrads& grads, const DynTensor& x) {
  return std::visit(
      [&](const auto& g) -> std::optional<DynTensor> {
        using B = typename std::decay_t<decltype(g)>::Backend;
        const auto& t = as_backend<B>(x, "grad");
        const auto& p = float_of(t, "grad: tensor");
        auto r = B::grad(p, g.grads);
        if (!r) return std::nullopt;
        return DynTensor(wrap<B, Float>(B::from_inner(*r)));
      },
      grads);
}

void no_grad_enter() {
  if (t_depth >= kMaxNoGradDepth)
    throw ArgumentError("no_grad_enter: more than " + std::to_string(kMaxNoGradDepth) + " nested scopes");
  t_saved[t_depth++] = autodiff::no_grad_flag();
  autodiff::no_grad_flag() = true;
}

void no_grad_exit() {
  if (t_depth == 0) throw ArgumentError("no_grad_exit: no open no-grad scope on this thread");
  autodiff::no_grad_flag() = t_saved[--t_depth];
}

bool grad_enabled() { return !autodiff::no_grad_flag(); }

}  // namespace ember::capi
