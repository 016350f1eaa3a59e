// Creation, host transfer and queries of runtime tensors.
#include <cmath>

#include "c_api/src/runtime/tensor_ops.hpp"

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

void check_dtype(const char* op, DType d) {
  if (!dtype_is_float(d) && !dtype_is_int(d) && d != DType::Bool)
    throw ArgumentError(std::string(op) + ": unknown dtype " + std::to_string(static_cast<int32_t>(d)));
}

}  // namespace

DynTensor from_data(const DynDevice& dev, const TensorData& data) {
  check_dtype("from_data", data.dtype);
  check_shape("from_data", data.shape);
  data.validate();
  return on_backend(dev, [&](auto tag) {
    using B = typename decltype(tag)::type;
    const auto d = BackendTraits<B>::device(dev);
    return with_kind_of<B>(data.dtype, [&](auto k) -> DynTensor {
      using K = decltype(k);
      return wrap<B, K>(B::template from_data<K>(data, d));
    });
  });
}

DynTensor full(const DynDevice& dev, DType dtype, const Shape& shape, double value) {
  check_dtype("full", dtype);
  check_shape("full", shape);
  if (dtype_is_int(dtype) && !(std::isfinite(value) && std::abs(value) < 9.2e18))
    throw ArgumentError("full: " + std::to_string(value) + " is not representable in an int tensor");
  if (dtype == DType::Bool) value = value != 0.0 ? 1.0 : 0.0;  // kernels rely on bools being 0 / 1
  return on_backend(dev, [&](auto tag) {
    using B = typename decltype(tag)::type;
    return with_kind_of<B>(dtype, [&](auto k) -> DynTensor {
      using K = decltype(k);
      return wrap<B, K>(B::template full<K>(shape, value, BackendTraits<B>::device(dev)));
    });
  });
}

DynTensor arange(const DynDevice& dev, DType dtype, int64_t start, int64_t end, int64_t step) {
  check_dtype("arange", dtype);
  if (step == 0) throw ArgumentError("arange: step must not be 0");
  // 128-bit so that extreme bounds cannot overflow the count.
  const __int128 span = static_cast<__int128>(end) - start;
  __int128 n = 0;
  if ((step > 0 && span > 0) || (step < 0 && span < 0)) n = (span - (step > 0 ? 1 : -1)) / step + 1;
  if (n > (__int128(1) << 40))
    throw ShapeError("arange: [" + std::to_string(start) + ", " + std::to_string(end) + ") by " +
                     std::to_string(step) + " has too many elements");
  std::vector<int64_t> values(static_cast<std::size_t>(n));
  // In unsigned arithmetic: start + i * step is in range for every i < n, but i * step alone may not be.
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<int64_t>(static_cast<uint64_t>(start) + static_cast<uint64_t>(i) * static_cast<uint64_t>(step));
  TensorData d = TensorData::from_vec<int64_t>(values, Shape{static_cast<int64_t>(n)});
  if (dtype != DType::I64) d = d.convert(dtype);
  return from_data(dev, d);
}

DynTensor random(const DynDevice& dev, const Distribution& dist, uint64_t seed, const Shape& shape) {
  check_shape("random", shape);
  if (auto* u = std::get_if<Uniform>(&dist); u && !(u->low <= u->high && std::isfinite(u->high - u->low)))
    throw ArgumentError("random: uniform needs finite low <= high");
  if (auto* g = std::get_if<Normal>(&dist); g && !(g->std >= 0 && std::isfinite(g->std) && std::isfinite(g->mean)))
    throw ArgumentError("random: normal needs a finite mean and std >= 0");
  if (auto* b = std::get_if<Bernoulli>(&dist); b && !(b->p >= 0 && b->p <= 1))
    throw ArgumentError("random: bernoulli needs 0 <= p <= 1");
  Rng rng(seed);
  const auto values = sample(rng, dist, static_cast<std::size_t>(shape.num_elements()));
  return from_data(dev, TensorData::from_vec<double>(values, shape));
}

TensorData to_data(const DynTensor& t) {
  return std::visit(
      [](const auto& x) {
        using B = typename std::decay_t<decltype(x)>::Backend;
        return visit_kind(x, [](auto k, const auto& p) { return B::template into_data<decltype(k)>(p); });
      },
      t);
}

DType dtype(const DynTensor& t) {
  return std::visit([](const auto& x) { return tensor_dtype(x); }, t);
}
Shape shape(const DynTensor& t) {
  return std::visit([](const auto& x) { return tensor_shape(x); }, t);
}
DynDevice device(const DynTensor& t) {
  return std::visit(
      [](const auto& x) {
        using B = typename std::decay_t<decltype(x)>::Backend;
        return BackendTraits<B>::dyn_device(tensor_device(x));
      },
      t);
}

DynTensor cast(const DynTensor& x, DType to) {
  check_dtype("cast", to);
  return std::visit(
      [&](const auto& t) -> DynTensor {
        using B = typename std::decay_t<decltype(t)>::Backend;
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

}  // namespace ember::capi
