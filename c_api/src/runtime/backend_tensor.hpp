#pragma once
// The typed side of the runtime-dispatch layer: what the ops, written once as templates over B (an Autodiff
// backend), see behind a handle of dyn.hpp. A DynTensor of B's runtime holds a BackendTensor<B>, itself a variant
// over B's Float, Int and Bool primitives; the visit_* helpers unwrap handles after checking they belong to B's
// runtime, so an op on tensors of two backends or two devices is an ArgumentError, never a bad cast.
#include <fmt/format.h>

#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "c_api/src/runtime/device_glue.hpp"
#include "c_api/src/runtime/dyn.hpp"

namespace ember::capi {

// The one runtime of backend B in this process (runtime_impl.hpp defines it; each runtime instantiates its own).
template <class B>
const BackendRuntime& runtime_instance();

template <class K>
constexpr std::size_t kind_index() {
  if constexpr (std::is_same_v<K, Float>) return 0;
  else if constexpr (std::is_same_v<K, Int>) return 1;
  else return 2;
}

template <class B>
struct BackendTensor {
  using Backend = B;
  // Alternatives by index (Float, Int, Bool): a backend may use one type for two kinds.
  std::variant<typename B::FloatPrimitive, typename B::IntPrimitive, typename B::BoolPrimitive> prim;
  Kind kind() const { return static_cast<Kind>(prim.index()); }
  // A handle of B's runtime owning a copy (primitives share their storage, so copies are cheap).
  operator DynTensor() const& { return DynTensor{&runtime_instance<B>(), std::make_shared<const BackendTensor>(*this)}; }
  operator DynTensor() && {
    return DynTensor{&runtime_instance<B>(), std::make_shared<const BackendTensor>(std::move(*this))};
  }
};

template <class B>
struct BackendGrads {
  using Backend = B;
  typename B::Gradients grads;
  operator DynGrads() && { return DynGrads{&runtime_instance<B>(), std::make_shared<const BackendGrads>(std::move(*this))}; }
};

template <class B, class K>
BackendTensor<B> wrap(Primitive<B, K> p) {
  return BackendTensor<B>{decltype(BackendTensor<B>::prim)(std::in_place_index<kind_index<K>()>, std::move(p))};
}

// Calls f(K{}, primitive) with the tensor's kind tag and primitive.
template <class B, class F>
decltype(auto) visit_kind(const BackendTensor<B>& t, F&& f) {
  switch (t.kind()) {
    case Kind::Float: return f(Float{}, std::get<0>(t.prim));
    case Kind::Int: return f(Int{}, std::get<1>(t.prim));
    case Kind::Bool: break;
  }
  return f(Bool{}, std::get<2>(t.prim));
}

template <class B, class K>
constexpr DType kind_dtype() {
  if constexpr (std::is_same_v<K, Float>) return dtype_of<typename B::FloatElem>();
  else if constexpr (std::is_same_v<K, Int>) return dtype_of<typename B::IntElem>();
  else return DType::Bool;
}

template <class B>
DType tensor_dtype(const BackendTensor<B>& t) {
  return visit_kind(t, [](auto k, const auto&) { return kind_dtype<B, decltype(k)>(); });
}
template <class B>
Shape tensor_shape(const BackendTensor<B>& t) {
  return visit_kind(t, [](auto k, const auto& p) { return B::template shape<decltype(k)>(p); });
}
template <class B>
typename B::Device tensor_device(const BackendTensor<B>& t) {
  return visit_kind(t, [](auto k, const auto& p) { return B::template device<decltype(k)>(p); });
}
// Operands of one op must share a device: GPU kernels cannot read another context's memory.
template <class B>
void check_same_device(const BackendTensor<B>& a, const BackendTensor<B>& b, const char* op) {
  if (!(tensor_device(a) == tensor_device(b)))
    throw ArgumentError(std::string(op) + ": tensors live on different " + BackendTraits<B>::name + " devices");
}

template <class B>
const typename B::FloatPrimitive& float_of(const BackendTensor<B>& t, const std::string& what) {
  if (t.kind() != Kind::Float)
    throw KindError(what + " must be a float tensor, got " + std::string(dtype_name(tensor_dtype(t))));
  return std::get<0>(t.prim);
}
template <class B>
const typename B::IntPrimitive& int_of(const BackendTensor<B>& t, const std::string& what) {
  if (t.kind() != Kind::Int)
    throw KindError(what + " must be an int tensor, got " + std::string(dtype_name(tensor_dtype(t))));
  return std::get<1>(t.prim);
}
template <class B>
const typename B::BoolPrimitive& bool_of(const BackendTensor<B>& t, const std::string& what) {
  if (t.kind() != Kind::Bool)
    throw KindError(what + " must be a bool tensor, got " + std::string(dtype_name(tensor_dtype(t))));
  return std::get<2>(t.prim);
}

// ---------------------------------------------------------------- unwrapping handles
// Unwraps `t` as a tensor of backend B (for lookups by tensor, like a gradient, where devices do not matter).
template <class B>
const BackendTensor<B>& as_backend(const DynTensor& t, const char* op) {
  if (t.runtime != &runtime_instance<B>()) throw ArgumentError(std::string(op) + ": tensors live on different backends");
  return *static_cast<const BackendTensor<B>*>(t.payload.get());
}
// Unwraps `t` as a tensor of backend B on the device of `like` (another operand of the op).
template <class B>
const BackendTensor<B>& same_backend(const DynTensor& t, const BackendTensor<B>& like, const char* op) {
  const BackendTensor<B>& p = as_backend<B>(t, op);
  check_same_device(p, like, op);
  return p;
}

// f(BackendTensor<B>) for a tensor of B's runtime (the dispatcher chose the runtime by this tensor).
template <class B, class F>
decltype(auto) visit_backend(F&& f, const DynTensor& t) {
  return f(as_backend<B>(t, "tensor"));
}
// f(BackendGrads<B>) for gradients of B's runtime.
template <class B, class F>
decltype(auto) visit_backend(F&& f, const DynGrads& g) {
  if (g.runtime != &runtime_instance<B>()) throw ArgumentError("gradients: they come from another backend");
  return f(*static_cast<const BackendGrads<B>*>(g.payload.get()));
}
// Visits two tensors that must live on the same device; f(BackendTensor<B>, BackendTensor<B>) -> R.
template <class B, class R, class F>
R visit_same(const DynTensor& a, const DynTensor& b, const char* op, F&& f) {
  const BackendTensor<B>& x = as_backend<B>(a, op);
  return f(x, same_backend<B>(b, x, op));
}
// f(std::type_identity<B>{}) for a device of B's runtime.
template <class B, class F>
decltype(auto) on_backend(const DynDevice& dev, F&& f) {
  if (dev.runtime != &runtime_instance<B>())
    throw ArgumentError(fmt::format("device: not a {} device", BackendTraits<B>::name));
  return f(std::type_identity<B>{});
}

// ---------------------------------------------------------------- ranks
// p reshaped to `rank` dims by leading 1s (NumPy alignment), recorded under autodiff like any reshape.
template <class B, class K>
Primitive<B, K> lift_rank(const Primitive<B, K>& p, std::size_t rank) {
  Shape s = B::template shape<K>(p);
  if (s.rank() >= rank) return p;
  s.dims.insert(s.dims.begin(), rank - s.rank(), 1);
  return B::template reshape<K>(p, s);
}

// ---------------------------------------------------------------- rank 0
// A rank-0 tensor (a scalar, one element) is a primitive of shape []: creation, reshape, host copies and autodiff
// carry that shape as is. Backend kernels are only relied on for ranks >= 1 (GPU kernels index dims), so an op meets
// a scalar operand as [1] (lift_rank to at least 1) and gives its result back as [] (to_scalar_if) where PyTorch's
// result is a scalar. Both are reshapes, recorded under autodiff, so gradients reach a rank-0 leaf in its shape.
template <class B, class K>
Primitive<B, K> to_scalar_if(bool scalar, const Primitive<B, K>& p) {
  if (!scalar || B::template shape<K>(p).rank() == 0) return p;
  return B::template reshape<K>(p, Shape{});
}
template <class B, class K>
Primitive<B, K> at_least_1d(const Primitive<B, K>& p) {
  return lift_rank<B, K>(p, 1);
}

// A typed tensor view of a float primitive whose rank the caller checked to be D.
template <class B, std::size_t D, class K = Float>
Tensor<B, D, K> typed(const Primitive<B, K>& p) {
  return Tensor<B, D, K>(p);
}

}  // namespace ember::capi
