// Creation, host transfer and queries of runtime tensors (arange and random, which only build host data, are in
// dispatch.cpp).
#include <cmath>

#include "c_api/src/runtime/backend_ops.hpp"

namespace ember::capi {
namespace {

// The kind a host dtype becomes: float dtypes Float, integer dtypes Int, Bool Bool.
template <class B, class F>
DynTensor with_kind_of(DType d, F&& f) {
  if (dtype_is_float(d)) return f(Float{});
  if (dtype_is_int(d)) return f(Int{});
  if (d == DType::Bool) return f(Bool{});
  throw ArgumentError("unknown dtype " + std::to_string(static_cast<int32_t>(d)));
}

}  // namespace

namespace ops {

template <class B>
DynTensor from_data(const DynDevice& dev, const TensorData& data) {
  check_dtype("from_data", data.dtype);
  check_shape("from_data", data.shape);
  data.validate();
  return on_backend<B>(dev, [&](auto) {
    const auto d = BackendTraits<B>::device(dev);
    return with_kind_of<B>(data.dtype, [&](auto k) -> DynTensor {
      using K = decltype(k);
      return wrap<B, K>(B::template from_data<K>(data, d));
    });
  });
}

template <class B>
DynTensor full(const DynDevice& dev, DType dtype, const Shape& shape, double value) {
  check_dtype("full", dtype);
  check_shape("full", shape);
  if (dtype_is_int(dtype) && !(std::isfinite(value) && std::abs(value) < 9.2e18))
    throw ArgumentError("full: " + std::to_string(value) + " is not representable in an int tensor");
  if (dtype == DType::Bool) value = value != 0.0 ? 1.0 : 0.0;  // kernels rely on bools being 0 / 1
  return on_backend<B>(dev, [&](auto) {
    return with_kind_of<B>(dtype, [&](auto k) -> DynTensor {
      using K = decltype(k);
      return wrap<B, K>(B::template full<K>(shape, value, BackendTraits<B>::device(dev)));
    });
  });
}

template <class B>
TensorData to_data(const DynTensor& t) {
  return visit_backend<B>(
      [](const auto& x) {
        return visit_kind(x, [](auto k, const auto& p) { return B::template into_data<decltype(k)>(p); });
      },
      t);
}

template <class B>
DType dtype(const DynTensor& t) {
  return visit_backend<B>([](const auto& x) { return tensor_dtype(x); }, t);
}
template <class B>
Shape shape(const DynTensor& t) {
  return visit_backend<B>([](const auto& x) { return tensor_shape(x); }, t);
}
template <class B>
DynDevice device(const DynTensor& t) {
  return visit_backend<B>([](const auto& x) { return BackendTraits<B>::dyn_device(tensor_device(x)); }, t);
}

template <class B>
DynTensor cast(const DynTensor& x, DType to) {
  check_dtype("cast", to);
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        return visit_kind(t, [&](auto from, const auto& p) -> DynTensor {
          using From = decltype(from);
          return with_kind_of<B>(to, [&](auto k) -> DynTensor {
            using To = decltype(k);
            if constexpr (std::is_same_v<From, To>) return t;
            else return wrap<B, To>(B::template cast<From, To>(p));
          });
        });
      },
      x);
}

}  // namespace ops

EMBER_RUNTIME_CREATION_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
