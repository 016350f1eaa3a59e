#pragma once
// Helpers shared by the shape family's converters (onnx/ops/shape*.cpp): axis normalisation, integer lists from an
// attribute or an input (the operators whose attributes became inputs across opsets), small host-made index tensors,
// and ONNX's element types. Everything float stays on the device: only shapes, axes and indices come to the host.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onnx/op_registry.hpp"

namespace ember::onnx_import::shape_detail {

using Outputs = std::vector<std::optional<DynTensor>>;

inline std::string text(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

// An ONNX axis in [-rank, rank) as a dim in [0, rank); an OnnxError naming the node beyond.
inline int64_t norm_axis(const OpContext& ctx, int64_t axis, int64_t rank, const char* what = "axis") {
  if (axis < -rank || axis >= rank) ctx.fail(fmt::format("{} {} is out of range for rank {}", what, axis, rank));
  return axis < 0 ? axis + rank : axis;
}

inline int64_t rank_of(const DynTensor& t) { return static_cast<int64_t>(capi::shape(t).rank()); }

inline int64_t numel(const std::vector<int64_t>& dims, std::size_t b = 0, std::size_t e = SIZE_MAX) {
  int64_t n = 1;
  for (std::size_t i = b; i < dims.size() && i < e; ++i) n *= dims[i];
  return n;
}

// An integer list that is the attribute `attr` before `input_from_opset` and input `input` from it on (Squeeze's
// axes, Split's split, Pad's pads, ...); nullopt when neither is given.
inline std::optional<std::vector<int64_t>> ints_attr_or_input(const OpContext& ctx, const char* attr, std::size_t input,
                                                              int64_t input_from_opset) {
  if (ctx.opset < input_from_opset) {
    if (!ctx.node.has_attr(attr)) return std::nullopt;
    return ctx.node.attr_ints(attr);
  }
  if (!ctx.has_input(input)) return std::nullopt;
  return ctx.ints(input);
}

// A host index list as a 1-D int tensor on the context's device (index_select's indices).
inline DynTensor index_tensor(const OpContext& ctx, const std::vector<int64_t>& idx) {
  return capi::from_data(ctx.device, TensorData::from_vec<int64_t>(idx, Shape{static_cast<int64_t>(idx.size())}));
}

// A host int64 tensor of `shape` on the context's device (Shape's and Size's outputs, computed indices).
inline DynTensor int64_tensor(const OpContext& ctx, const std::vector<int64_t>& v, Shape shape) {
  return capi::from_data(ctx.device, TensorData::from_vec<int64_t>(v, std::move(shape)));
}

// Negative indices counted from the end of a dim of size n, on the device (index tensors stay where they are).
inline DynTensor wrap_negative(const DynTensor& idx, int64_t n) {
  const DynTensor i =
      capi::dtype(idx) == DType::Bool || dtype_is_float(capi::dtype(idx)) ? capi::cast(idx, DType::I64) : idx;
  return capi::where(capi::compare_scalar(i, CompareOp::Lt, 0.0),
                     capi::scalar(i, ScalarOp::Add, static_cast<double>(n)), i);
}

// A tensor's values read to the host as int64 (indices, conditions, sequence lengths: never float data that would
// carry gradients), with the same 2^20-element bound as OpContext::ints.
inline std::vector<int64_t> host_ints(const OpContext& ctx, const DynTensor& t, const char* what) {
  const Shape s = capi::shape(t);
  if (s.num_elements() > (int64_t{1} << 20))
    ctx.fail(fmt::format("{} has {} elements; at most 2^20 are read to the host", what, s.num_elements()));
  const TensorData d = capi::to_data(t);
  std::vector<int64_t> out(d.num_elements());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = d.get<int64_t>(i);
  return out;
}

// A one-element input of any dtype read on the host without a cast (a cast to float64 is refused on the GPU
// backends): Range's bounds, OneHot's depth.
inline double host_scalar(const OpContext& ctx, std::size_t i) {
  const DynTensor& t = ctx.input(i);
  if (capi::shape(t).num_elements() != 1) ctx.fail(fmt::format("input {} must hold exactly one value", i));
  return capi::to_data(t).get<double>(0);
}

}  // namespace ember::onnx_import::shape_detail
