// The composed shape ops on runtime tensors (issue 13): pad, step slices, baddbmm, einsum, logsumexp, std and
// interpolate. Each checks what a C caller can pass and a typed caller cannot (ranks, kinds, scalars), then runs the
// rank-agnostic primitive composition of engine/tensor/shape_ops.hpp / einsum.hpp, so gradients come with them.
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "c_api/src/runtime/backend_ops.hpp"

namespace ember::capi {
namespace {

// The result of a reduction kept with size 1 over `dims` (empty: all), with those dims dropped unless keepdim; a
// rank-0 x gives a rank-0 result.
template <class B>
DynTensor finish_reduction(const typename B::FloatPrimitive& y, const Shape& s, const std::vector<int64_t>& dims,
                           bool keepdim) {
  if (s.rank() == 0) return wrap<B, Float>(to_scalar_if<B, Float>(true, y));
  if (keepdim) return wrap<B, Float>(y);
  const auto ds = shape_ops::reduce_dims("reduce", dims, s.rank());
  Shape out;
  for (std::size_t i = 0; i < s.rank(); ++i)
    if (std::find(ds.begin(), ds.end(), i) == ds.end()) out.dims.push_back(s[i]);
  return wrap<B, Float>(B::template reshape<Float>(y, out));
}

}  // namespace

namespace ops {

template <class B>
DynTensor pad(const DynTensor& x, const std::vector<int64_t>& pads, PadMode mode, double value) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        if (tensor_shape(t).rank() == 0) {
          if (!pads.empty()) throw ArgumentError("pad: a rank-0 tensor has no dims to pad");
          return t;
        }
        if (t.kind() == Kind::Int) {
          if (!(std::isfinite(value) && std::abs(value) < 9.2e18))
            throw ArgumentError(fmt::format("pad: value {} is not representable in an int tensor", value));
          value = std::trunc(value);
        } else if (t.kind() == Kind::Bool) {
          value = value != 0 ? 1.0 : 0.0;
        }
        return visit_kind(t, [&](auto k, const auto& p) -> DynTensor {
          using K = decltype(k);
          return wrap<B, K>(shape_ops::pad<B, K>(p, pads, mode, value));
        });
      },
      x);
}

template <class B>
DynTensor slice_step(const DynTensor& x, const std::vector<StepSlice>& slices) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const Shape s = tensor_shape(t);
        if (slices.size() > s.rank())
          throw IndexError(fmt::format("slice: {} ranges for shape {}", slices.size(), s.to_string()));
        if (s.rank() == 0) return t;
        return visit_kind(t, [&](auto k, const auto& p) -> DynTensor {
          using K = decltype(k);
          return wrap<B, K>(shape_ops::slice_step<B, K>(p, slices));
        });
      },
      x);
}

template <class B>
DynTensor baddbmm(const DynTensor& input, const DynTensor& b1, const DynTensor& b2, double beta, double alpha) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& ip = float_of(t, "baddbmm: input");
        const auto& p1 = float_of(same_backend<B>(b1, t, "baddbmm"), "baddbmm: batch1");
        const auto& p2 = float_of(same_backend<B>(b2, t, "baddbmm"), "baddbmm: batch2");
        return wrap<B, Float>(shape_ops::baddbmm<B>(ip, p1, p2, beta, alpha));
      },
      input);
}

template <class B>
DynTensor einsum(const std::string& equation, const std::vector<const DynTensor*>& xs) {
  if (xs.empty()) throw ArgumentError("einsum: no operands");
  const BackendTensor<B>& first = as_backend<B>(*xs[0], "einsum");
  std::vector<typename B::FloatPrimitive> ps;
  for (std::size_t i = 0; i < xs.size(); ++i)
    ps.push_back(float_of(same_backend<B>(*xs[i], first, "einsum"), fmt::format("einsum: operand {}", i)));
  std::size_t rank = 0;
  const auto y = shape_ops::einsum<B>(equation, ps, &rank);
  return wrap<B, Float>(to_scalar_if<B, Float>(rank == 0, y));
}

template <class B>
DynTensor logsumexp(const DynTensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& p = float_of(t, "logsumexp: x");
        const Shape s = tensor_shape(t);
        for (int64_t d : dims) wrap_dim("logsumexp", d, std::max<std::size_t>(s.rank(), 1));
        const auto y = shape_ops::logsumexp<B>(at_least_1d<B, Float>(p), s.rank() ? dims : std::vector<int64_t>{});
        return finish_reduction<B>(y, s, dims, keepdim);
      },
      x);
}

template <class B>
DynTensor std_dev(const DynTensor& x, const std::vector<int64_t>& dims, double correction, bool keepdim) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& p = float_of(t, "std: x");
        const Shape s = tensor_shape(t);
        if (!std::isfinite(correction)) throw ArgumentError(fmt::format("std: correction {} is not finite", correction));
        for (int64_t d : dims) wrap_dim("std", d, std::max<std::size_t>(s.rank(), 1));
        const auto y = shape_ops::std_dev<B>(at_least_1d<B, Float>(p), s.rank() ? dims : std::vector<int64_t>{},
                                             correction);
        return finish_reduction<B>(y, s, dims, keepdim);
      },
      x);
}

template <class B>
DynTensor interpolate(const DynTensor& x, const InterpolateOptions& options) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& p = float_of(t, "interpolate: input");
        return wrap<B, Float>(shape_ops::interpolate<B>(p, options));
      },
      x);
}

}  // namespace ops

EMBER_RUNTIME_SHAPE_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
