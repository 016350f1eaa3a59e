// Elementwise math, comparisons, reductions and matmul on runtime tensors, straight on the backend primitives
// (rank-agnostic) after the checks the typed Tensor makes. Operands of different ranks are aligned NumPy-style by
// leading 1s, so broadcasting works across ranks; mixed kinds (float + int) are an error, never a silent promotion.
// Rank-0 operands are lifted to [1] and results that PyTorch gives as scalars made rank 0 again (backend_tensor.hpp);
// reductions that drop the last dim and full reductions give rank 0, as in PyTorch.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "c_api/src/runtime/backend_ops.hpp"

namespace ember::capi {
namespace {

template <class B>
void same_kind(const BackendTensor<B>& a, const BackendTensor<B>& b, const char* op) {
  if (a.kind() != b.kind())
    throw KindError(std::string(op) + ": operands are " + std::string(dtype_name(tensor_dtype(a))) + " and " +
                    std::string(dtype_name(tensor_dtype(b))) + " (cast one of them first)");
}

// Broadcast shape of a and b (checked), and the rank of the result (0 when both are scalars); operands are lifted
// to lift(rank), which is at least 1.
template <class B>
std::size_t broadcast_rank(const BackendTensor<B>& a, const BackendTensor<B>& b, const char* op) {
  const Shape sa = tensor_shape(a), sb = tensor_shape(b);
  check_shape(op, broadcast_shapes(op, sa, sb));
  return std::max(sa.rank(), sb.rank());
}
constexpr std::size_t lift(std::size_t rank) { return std::max<std::size_t>(rank, 1); }

// f(p) on a primitive seen as at least [1], the result given back as [] when p is a scalar: elementwise ops of
// one operand.
template <class R, class K, class B, class F>
Primitive<B, R> on_1d(const Primitive<B, K>& p, F&& f) {
  const bool scalar = B::template shape<K>(p).rank() == 0;
  return to_scalar_if<B, R>(scalar, f(at_least_1d<B, K>(p)));
}

void check_int_scalar(const char* op, double s) {
  if (!(std::isfinite(s) && std::abs(s) < 9.2e18))
    throw ArgumentError(std::string(op) + ": scalar " + std::to_string(s) + " is not representable for an int tensor");
}

// Drops dim w unless keepdim; the input had `rank` dims (0 for a scalar, reduced as [1]: the result stays rank 0,
// as torch.sum(scalar, 0) is). Dropping the only dim of a rank-1 input gives rank 0, as in PyTorch.
template <class B, class K>
Primitive<B, K> drop_dim(Primitive<B, K> p, std::size_t w, bool keepdim, std::size_t rank) {
  if (rank == 0) return to_scalar_if<B, K>(true, p);
  if (keepdim) return p;
  Shape s = B::template shape<K>(p);
  s.dims.erase(s.dims.begin() + static_cast<std::ptrdiff_t>(w));
  return B::template reshape<K>(p, s);
}

}  // namespace

namespace ops {

template <class B>
DynTensor unary(const DynTensor& x, UnaryOp op) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        if (t.kind() == Kind::Float)
          return wrap<B, Float>(on_1d<Float, Float, B>(std::get<0>(t.prim), [&](const auto& p) { return B::float_unary(p, op); }));
        if (t.kind() == Kind::Int && op_takes_int(op))
          return wrap<B, Int>(on_1d<Int, Int, B>(std::get<1>(t.prim), [&](const auto& p) { return B::int_unary(p, op); }));
        throw KindError(fmt::format("{}: not defined for {} tensors", op_name(op), dtype_name(tensor_dtype(t))));
      },
      x);
}

template <class B>
DynTensor binary(const DynTensor& a, const DynTensor& b, BinaryOp op) {
  const char* name = op_name(op);
  return visit_same<B, DynTensor>(a, b, name, [&](const auto& x, const auto& y) -> DynTensor {
    same_kind(x, y, name);
    const std::size_t r = broadcast_rank(x, y, name), l = lift(r);
    if (x.kind() == Kind::Float)
      return wrap<B, Float>(to_scalar_if<B, Float>(r == 0, B::float_binary(lift_rank<B, Float>(std::get<0>(x.prim), l),
                                                                          lift_rank<B, Float>(std::get<0>(y.prim), l), op)));
    if (x.kind() == Kind::Int) {
      if (!op_takes_int(op)) throw KindError(fmt::format("{}: not defined for int tensors", name));
      return wrap<B, Int>(to_scalar_if<B, Int>(r == 0, B::int_binary(lift_rank<B, Int>(std::get<1>(x.prim), l),
                                                                    lift_rank<B, Int>(std::get<1>(y.prim), l), op)));
    }
    throw KindError(std::string(name) + ": not defined for bool tensors (cast to int or float first)");
  });
}

template <class B>
DynTensor scalar(const DynTensor& x, ScalarOp op, double s) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        if (t.kind() == Kind::Float)
          return wrap<B, Float>(on_1d<Float, Float, B>(std::get<0>(t.prim), [&](const auto& p) { return B::float_scalar(p, op, s); }));
        if (t.kind() == Kind::Int) {
          check_int_scalar("scalar", s);
          // INT64_MIN / -1 wraps in the kernels (as in the typed engine and PyTorch); nothing to refuse here.
          const auto& p = std::get<1>(t.prim);
          return wrap<B, Int>(on_1d<Int, Int, B>(p, [&](const auto& q) { return B::int_scalar(q, op, s); }));
        }
        throw KindError("scalar: not defined for bool tensors (cast to int or float first)");
      },
      x);
}

template <class B>
DynTensor compare(const DynTensor& a, const DynTensor& b, CompareOp op) {
  const char* name = op_name(op);
  return visit_same<B, DynTensor>(a, b, name, [&](const auto& x, const auto& y) -> DynTensor {
    same_kind(x, y, name);
    const std::size_t r = broadcast_rank(x, y, name), l = lift(r);
    const auto out = [&](const typename B::BoolPrimitive& p) { return wrap<B, Bool>(to_scalar_if<B, Bool>(r == 0, p)); };
    switch (x.kind()) {
      case Kind::Float:
        return out(B::float_compare(lift_rank<B, Float>(std::get<0>(x.prim), l),
                                    lift_rank<B, Float>(std::get<0>(y.prim), l), op));
      case Kind::Int:
        return out(B::int_compare(lift_rank<B, Int>(std::get<1>(x.prim), l),
                                  lift_rank<B, Int>(std::get<1>(y.prim), l), op));
      case Kind::Bool: break;
    }
    if (op != CompareOp::Eq && op != CompareOp::Ne)
      throw KindError(std::string(name) + ": bool tensors only compare with eq and ne");
    auto ne = B::bool_logic(lift_rank<B, Bool>(std::get<2>(x.prim), l), lift_rank<B, Bool>(std::get<2>(y.prim), l),
                            LogicOp::Xor);
    return out(op == CompareOp::Ne ? ne : B::bool_not(ne));
  });
}

template <class B>
DynTensor compare_scalar(const DynTensor& x, CompareOp op, double s) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        if (t.kind() == Kind::Float)
          return wrap<B, Bool>(
              on_1d<Bool, Float, B>(std::get<0>(t.prim), [&](const auto& p) { return B::float_compare_scalar(p, op, s); }));
        if (t.kind() == Kind::Int)
          return wrap<B, Bool>(
              on_1d<Bool, Int, B>(std::get<1>(t.prim), [&](const auto& p) { return B::int_compare_scalar(p, op, s); }));
        throw KindError(std::string(op_name(op)) + ": compare a bool tensor with another tensor");
      },
      x);
}

template <class B>
DynTensor predicate(const DynTensor& x, PredicateOp op) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        if (t.kind() != Kind::Float)
          throw KindError(fmt::format("{}: not defined for {} tensors", op_name(op), dtype_name(tensor_dtype(t))));
        return wrap<B, Bool>(on_1d<Bool, Float, B>(std::get<0>(t.prim), [&](const auto& p) { return B::float_predicate(p, op); }));
      },
      x);
}

template <class B>
DynTensor logical(const DynTensor& a, const DynTensor& b, LogicOp op) {
  return visit_same<B, DynTensor>(a, b, "logical", [&](const auto& x, const auto& y) -> DynTensor {
    const auto& p = bool_of(x, "logical: a");
    const auto& q = bool_of(y, "logical: b");
    const std::size_t r = broadcast_rank(x, y, "logical"), l = lift(r);
    return wrap<B, Bool>(to_scalar_if<B, Bool>(r == 0, B::bool_logic(lift_rank<B, Bool>(p, l), lift_rank<B, Bool>(q, l), op)));
  });
}

template <class B>
DynTensor logical_not(const DynTensor& x) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        return wrap<B, Bool>(on_1d<Bool, Bool, B>(bool_of(t, "logical_not: x"), [](const auto& p) { return B::bool_not(p); }));
      },
      x);
}

template <class B>
DynTensor where(const DynTensor& cond, const DynTensor& a, const DynTensor& b) {
  return visit_same<B, DynTensor>(a, b, "where", [&](const auto& x, const auto& y) -> DynTensor {
    const auto& c = same_backend<B>(cond, x, "where");
    const auto& cp = bool_of(c, "where: cond");
    same_kind(x, y, "where");
    const Shape sc = tensor_shape(c), sa = tensor_shape(x), sb = tensor_shape(y);
    check_shape("where", broadcast_shapes("where", broadcast_shapes("where", sc, sa), sb));
    const std::size_t r = std::max({sc.rank(), sa.rank(), sb.rank()}), l = lift(r);
    const auto cl = lift_rank<B, Bool>(cp, l);
    return visit_kind(x, [&](auto k, const auto& p) -> DynTensor {
      using K = decltype(k);
      const auto& q = std::get<kind_index<K>()>(y.prim);
      return wrap<B, K>(to_scalar_if<B, K>(r == 0, B::template where<K>(cl, lift_rank<B, K>(p, l), lift_rank<B, K>(q, l))));
    });
  });
}

template <class B>
DynTensor reduce(const DynTensor& x, ReduceOp op, int64_t dim, bool keepdim) {
  const char* name = op_name(op);
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const Shape s = tensor_shape(t);
        const std::size_t w = wrap_dim(name, dim, lift(s.rank()));  // a scalar takes dim 0 or -1, as in PyTorch
        if (op == ReduceOp::Max || op == ReduceOp::Min) checks::nonempty(name, s.rank() ? s : Shape{1}, w);
        if (t.kind() == Kind::Float)
          return wrap<B, Float>(drop_dim<B, Float>(B::float_reduce(at_least_1d<B, Float>(std::get<0>(t.prim)), op, w),
                                                   w, keepdim, s.rank()));
        if (t.kind() == Kind::Int)
          return wrap<B, Int>(drop_dim<B, Int>(B::int_reduce(at_least_1d<B, Int>(std::get<1>(t.prim)), op, w), w,
                                               keepdim, s.rank()));
        throw KindError(std::string(name) + ": not defined for bool tensors (cast to int first)");
      },
      x);
}

template <class B>
DynTensor reduce_all(const DynTensor& x, ReduceOp op) {
  const char* name = op_name(op);
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        if (op == ReduceOp::Max || op == ReduceOp::Min) checks::nonempty(name, tensor_shape(t));
        if (t.kind() == Kind::Float)
          return wrap<B, Float>(to_scalar_if<B, Float>(true, B::float_reduce_all(at_least_1d<B, Float>(std::get<0>(t.prim)), op)));
        if (t.kind() == Kind::Int)
          return wrap<B, Int>(to_scalar_if<B, Int>(true, B::int_reduce_all(at_least_1d<B, Int>(std::get<1>(t.prim)), op)));
        throw KindError(std::string(name) + ": not defined for bool tensors (cast to int first)");
      },
      x);
}

template <class B>
DynTensor arg_reduce(const DynTensor& x, ArgReduceOp op, int64_t dim, bool keepdim) {
  const char* name = op == ArgReduceOp::ArgMax ? "argmax" : "argmin";
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const Shape s = tensor_shape(t);
        const std::size_t w = wrap_dim(name, dim, lift(s.rank()));
        checks::nonempty(name, s.rank() ? s : Shape{1}, w);
        if (t.kind() == Kind::Float)
          return wrap<B, Int>(drop_dim<B, Int>(B::float_arg_reduce(at_least_1d<B, Float>(std::get<0>(t.prim)), op, w), w,
                                               keepdim, s.rank()));
        if (t.kind() == Kind::Int)
          return wrap<B, Int>(drop_dim<B, Int>(B::int_arg_reduce(at_least_1d<B, Int>(std::get<1>(t.prim)), op, w), w,
                                               keepdim, s.rank()));
        throw KindError(std::string(name) + ": not defined for bool tensors");
      },
      x);
}

template <class B>
DynTensor matmul(const DynTensor& a, const DynTensor& b) {
  return visit_same<B, DynTensor>(a, b, "matmul", [&](const auto& x, const auto& y) -> DynTensor {
    const auto& p = float_of(x, "matmul: a");
    const auto& q = float_of(y, "matmul: b");
    const Shape sa = tensor_shape(x), sb = tensor_shape(y);
    if (sa.rank() < 2 || sb.rank() < 2)
      throw ShapeError("matmul: needs rank >= 2 operands, got " + sa.to_string() + " and " + sb.to_string());
    const std::size_t r = std::max(sa.rank(), sb.rank());
    const auto pl = lift_rank<B, Float>(p, r), ql = lift_rank<B, Float>(q, r);
    check_shape("matmul", checks::matmul(B::template shape<Float>(pl), B::template shape<Float>(ql)));
    return wrap<B, Float>(B::float_matmul(pl, ql));
  });
}

template <class B>
DynTensor softmax(const DynTensor& x, int64_t dim, bool log) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& p = float_of(t, log ? "log_softmax: x" : "softmax: x");
        const std::size_t rank = tensor_shape(t).rank();
        return with_rank("softmax", lift(rank), [&](auto d) -> DynTensor {
          const auto tt = typed<B, decltype(d)::value>(at_least_1d<B, Float>(p));
          return wrap<B, Float>(to_scalar_if<B, Float>(rank == 0, (log ? tt.log_softmax(dim) : tt.softmax(dim)).primitive()));
        });
      },
      x);
}

}  // namespace ops

EMBER_RUNTIME_MATH_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
