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
    const bool scalar = data.shape.rank() == 0;
    return with_kind_of<B>(data.dtype, [&](auto k) -> DynTensor {
      using K = decltype(k);
      if (!scalar) return wrap<B, K>(B::template from_data<K>(data, d));
      TensorData one = data;  // a scalar is made as [1] and viewed as [] (backend_tensor.hpp: rank 0)
      one.shape = Shape{1};
      return wrap<B, K>(to_scalar_if<B, K>(true, B::template from_data<K>(one, d)));
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
      const bool scalar = shape.rank() == 0;
      const auto p = B::template full<K>(scalar ? Shape{1} : shape, value, BackendTraits<B>::device(dev));
      return wrap<B, K>(to_scalar_if<B, K>(scalar, p));
    });
  });
}

template <class B>
TensorData to_data(const DynTensor& t) {
  return visit_backend<B>(
      [](const auto& x) {
        return visit_kind(x, [](auto k, const auto& p) {
          using K = decltype(k);
          TensorData d = B::template into_data<K>(at_least_1d<B, K>(p));
          d.shape = B::template shape<K>(p);  // a scalar read as [1] is handed back as []
          return d;
        });
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

template <class B>
const void* data_ptr(const DynTensor& x) {
  if constexpr (BackendTraits<B>::id != BackendId::Cpu) {
    (void)x;
    throw UnsupportedError(fmt::format("data_ptr: a {} tensor lives in device memory (copy it with "
                                       "ember_tensor_copy_to)",
                                       BackendTraits<B>::name));
  } else if constexpr (!std::is_same_v<typename B::InnerBackend, Cpu<typename B::FloatElem>>) {
    // issue 14: ember_compile's capture runtime: a host read of a value the capture would freeze.
    (void)x;
    throw UnsupportedError("data_ptr: a tensor of a compiled forward's capture cannot be read in place");
  } else {
    // CPU primitives are contiguous row-major buffers, shared and never written after the op that made them.
    return visit_backend<B>(
        [](const auto& t) {
          return visit_kind(t, [](auto k, const auto& p) -> const void* {
            const auto& cpu = [&]() -> const auto& {
              if constexpr (std::is_same_v<decltype(k), Float>) return p.value;  // Autodiff's value
              else return p;
            }();
            return cpu.buffer ? cpu.data() : nullptr;
          });
        },
        x);
  }
}

}  // namespace ops

EMBER_RUNTIME_CREATION_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
