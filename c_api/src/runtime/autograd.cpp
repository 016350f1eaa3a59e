// Autodiff on runtime tensors: require grad, backward (optionally seeded), reading gradients (no-grad scopes are in
// grad_mode.cpp).
#include <vector>

#include "c_api/src/runtime/backend_ops.hpp"

namespace ember::capi {
namespace {

template <class B>
constexpr bool kTracks = detail::HasGradTracking<B>;

}  // namespace

namespace ops {

template <class B>
DynTensor set_requires_grad(const DynTensor& x, bool on) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& p = float_of(t, "set_requires_grad: tensor");
        if constexpr (kTracks<B>) return wrap<B, Float>(B::float_require_grad(p, on));
        else throw UnsupportedError("set_requires_grad: this backend does not record gradients");
      },
      x);
}

template <class B>
bool requires_grad(const DynTensor& x) {
  return visit_backend<B>(
      [&](const auto& t) -> bool {
        if (t.kind() != Kind::Float) return false;
        if constexpr (kTracks<B>) return B::float_is_require_grad(std::get<0>(t.prim));
        else return false;
      },
      x);
}

template <class B>
DynTensor detach(const DynTensor& x) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        if constexpr (kTracks<B>) {
          if (t.kind() == Kind::Float) return wrap<B, Float>(B::float_detach(std::get<0>(t.prim)));
        }
        return t;  // int and bool tensors are never tracked
      },
      x);
}

template <class B>
DynGrads backward(const DynTensor& x, const DynTensor* grad) {
  return visit_backend<B>(
      [&](const auto& t) -> DynGrads {
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

template <class B>
std::optional<DynTensor> grad(const DynGrads& grads, const DynTensor& x) {
  return visit_backend<B>(
      [&](const auto& g) -> std::optional<DynTensor> {
        const auto& t = as_backend<B>(x, "grad");
        const auto& p = float_of(t, "grad: tensor");
        auto r = B::grad(p, g.grads);
        if (!r) return std::nullopt;
        return DynTensor(wrap<B, Float>(B::from_inner(*r)));
      },
      grads);
}

}  // namespace ops

EMBER_RUNTIME_AUTOGRAD_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
