// In-place updates of a handle (x.copy_(y), x.add_(y), x.fill_(s), ...). Primitives are immutable values, so an
// in-place op computes the new value like the out-of-place op would and returns it for the handle to take in place
// of the old one; what makes it in-place is the autodiff bookkeeping around it (Autodiff<B>::float_inplace_*): a leaf
// that requires grad is refused while ops are recorded, the update counts in the tensor's version (so a backward
// through an op that saved the old value fails, as in PyTorch), and with recording off a leaf keeps its identity.
// The result keeps self's shape and dtype: `other` is broadcast to self's shape, never the other way round.
#include <fmt/format.h>

#include <cmath>

#include "c_api/src/runtime/backend_ops.hpp"

namespace ember::capi {
namespace {

template <class B>
constexpr bool kTracks = detail::HasGradTracking<B>;

BinaryOp binary_of(InplaceOp op) {
  switch (op) {
    case InplaceOp::Add: return BinaryOp::Add;
    case InplaceOp::Sub: return BinaryOp::Sub;
    case InplaceOp::Mul: return BinaryOp::Mul;
    default: break;
  }
  return BinaryOp::Div;
}
ScalarOp scalar_of(InplaceOp op) {
  switch (op) {
    case InplaceOp::Add: return ScalarOp::Add;
    case InplaceOp::Sub: return ScalarOp::Sub;
    case InplaceOp::Mul: return ScalarOp::Mul;
    default: break;
  }
  return ScalarOp::Div;
}

void check_op(InplaceOp op) {
  if (static_cast<int32_t>(op) < 0 || static_cast<int32_t>(op) > static_cast<int32_t>(InplaceOp::Fill))
    throw ArgumentError(fmt::format("inplace: unknown op {}", static_cast<int32_t>(op)));
}

// What an op may do to a tensor of self's kind without changing its dtype (PyTorch refuses the same).
template <class B>
void check_kind(const BackendTensor<B>& x, InplaceOp op) {
  const char* name = inplace_name(op);
  if (x.kind() == Kind::Bool && op != InplaceOp::Copy && op != InplaceOp::Fill)
    throw KindError(fmt::format("{}: not defined for bool tensors", name));
  if (x.kind() == Kind::Int && op == InplaceOp::Div)
    throw KindError(fmt::format("{}: result type float can't be cast to the desired output type {} (division of "
                                "int tensors gives floats)", name, dtype_name(tensor_dtype(x))));
}

// Every element of x replaced by `v` (x's shape), as one recorded op when x is tracked and ops are recorded: the
// result then still depends on x (with a zero gradient), like PyTorch's copy_ / fill_ of a tensor that requires grad.
template <class B, class K>
Primitive<B, K> replace_all(const Primitive<B, K>& x, const Primitive<B, K>& v) {
  if constexpr (std::is_same_v<K, Float> && kTracks<B>) {
    if (B::float_is_require_grad(x) && !autodiff::no_grad_flag()) {
      std::vector<Range> all;
      for (auto d : B::template shape<K>(x).dims) all.push_back({0, d});
      return B::template slice_assign<K>(x, all, v);
    }
  }
  return v;
}

// Runs `compute` (self's new value) between the autodiff bookkeeping of an in-place update of self.
template <class B, class F>
DynTensor update(const BackendTensor<B>& self, F&& compute) {
  if constexpr (kTracks<B>) {
    if (self.kind() == Kind::Float) {
      const auto& p = std::get<0>(self.prim);
      B::float_inplace_begin(p);
      DynTensor r;
      try {
        r = compute();
      } catch (...) {
        B::float_inplace_undo(p);
        throw;
      }
      const auto& rp = float_of(as_backend<B>(r, "inplace"), "inplace: result");
      return wrap<B, Float>(B::float_inplace_commit(p, rp));
    }
  }
  return compute();
}

}  // namespace

namespace ops {

template <class B>
DynTensor inplace(const DynTensor& self, const DynTensor& other, InplaceOp op) {
  check_op(op);
  const char* name = inplace_name(op);
  if (op == InplaceOp::Fill) throw ArgumentError("fill_: takes a scalar (ember_tensor_inplace_scalar)");
  return visit_same<B, DynTensor>(self, other, name, [&](const auto& x, const auto& y) -> DynTensor {
    check_kind(x, op);
    if (x.kind() != y.kind())
      throw KindError(fmt::format("{}: other is {}, self is {} (cast it first)", name, dtype_name(tensor_dtype(y)),
                                  dtype_name(tensor_dtype(x))));
    const Shape xs = tensor_shape(x), ys = tensor_shape(y);
    const Shape b = broadcast_shapes(name, xs, ys);
    if (!(b == xs))
      throw ShapeError(fmt::format("{}: output with shape {} doesn't match the broadcast shape {}", name,
                                   xs.to_string(), b.to_string()));
    return update(x, [&]() -> DynTensor {
      if (op != InplaceOp::Copy) return ops::binary<B>(self, other, binary_of(op));
      return visit_kind(x, [&](auto k, const auto& xp) -> DynTensor {
        using K = decltype(k);
        const auto& yp = std::get<kind_index<K>()>(y.prim);
        return wrap<B, K>(replace_all<B, K>(xp, B::template expand<K>(lift_rank<B, K>(yp, xs.rank()), xs)));
      });
    });
  });
}

template <class B>
DynTensor inplace_scalar(const DynTensor& self, InplaceOp op, double s) {
  check_op(op);
  const char* name = inplace_name(op);
  if (op == InplaceOp::Copy) throw ArgumentError("copy_: takes a tensor (ember_tensor_inplace); fill_ sets a scalar");
  return visit_backend<B>(
      [&](const auto& x) -> DynTensor {
        check_kind(x, op);
        if (x.kind() == Kind::Int && !(std::isfinite(s) && std::trunc(s) == s && std::abs(s) < 9.2e18))
          throw KindError(fmt::format("{}: result type float can't be cast to the desired output type {} (scalar {} "
                                      "for an int tensor)", name, dtype_name(tensor_dtype(x)), s));
        return update(x, [&]() -> DynTensor {
          if (op != InplaceOp::Fill) return ops::scalar<B>(self, scalar_of(op), s);
          return visit_kind(x, [&](auto k, const auto& xp) -> DynTensor {
            using K = decltype(k);
            const double v = std::is_same_v<K, Bool> ? (s != 0 ? 1.0 : 0.0) : s;
            return wrap<B, K>(replace_all<B, K>(
                xp, B::template full<K>(B::template shape<K>(xp), v, B::template device<K>(xp))));
          });
        });
      },
      self);
}

}  // namespace ops

EMBER_RUNTIME_INPLACE_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
