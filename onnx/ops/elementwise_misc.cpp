// ONNX tensor-math operators that are not plain elementwise maps (h-onnx-math): Cast / CastLike, Where, Softmax /
// LogSoftmax / Hardmax (opset < 13 flattens to 2-D at `axis`), CumSum (exclusive / reverse), Einsum and the
// window generators (Hann / Hamming / Blackman).
#include <algorithm>
#include <numbers>

#include "onnx/ops/math_util.hpp"

namespace ember::onnx_import::math {
namespace {

// GPU backends compute in float32 only: a cast to double keeps float32 there (as a float16 tensor is float32 in
// every backend), so a graph that widens for precision still runs instead of failing at its Cast.
DynTensor cast_to(const DynTensor& x, DType to) {
  if (to == DType::F64 && capi::device(x).backend != BackendId::Cpu) to = DType::F32;
  return capi::cast(x, to);
}

Outs cast_op(OpContext& ctx) {
  if (!ctx.node.has_attr("to")) ctx.fail("attribute 'to' is required");
  return one(cast_to(ctx.input(0), onnx_elem_dtype(ctx, ctx.node.attr_int("to", 0))));
}

Outs cast_like(OpContext& ctx) { return one(cast_to(ctx.input(0), capi::dtype(ctx.input(1)))); }

// Where: a and b of one kind broadcast with the condition. A cond given as numbers (some exporters) is != 0.
Outs where_op(OpContext& ctx) {
  DynTensor cond = ctx.input(0);
  if (!is_bool(cond)) cond = capi::compare_scalar(cond, CompareOp::Ne, 0.0);
  return one(capi::where(cond, ctx.input(1), ctx.input(2)));
}

// Runs f(x', axis') where, before opset 13, x is viewed as 2-D [prod(dims < axis), prod(dims >= axis)] (axis
// defaults to 1) and the result is given back in x's shape; from 13 on, f runs on `axis` itself (default -1).
template <class F>
Outs along_axis(OpContext& ctx, F&& f) {
  const DynTensor& x = ctx.input(0);
  const Shape s = capi::shape(x);
  if (s.rank() == 0) ctx.fail("needs an input of rank >= 1");
  if (ctx.opset >= 13) return one(f(x, norm_axis(ctx, ctx.node.attr_int("axis", -1), s.rank())));
  const int64_t axis = norm_axis(ctx, ctx.node.attr_int("axis", 1), s.rank());
  int64_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < s.rank(); ++i) (static_cast<int64_t>(i) < axis ? outer : inner) *= s[i];
  const DynTensor y = f(capi::reshape(x, {outer, inner}), 1);
  return one(capi::reshape(y, s.dims));
}

Converter softmax(bool log) {
  return [log](OpContext& ctx) {
    return along_axis(ctx, [&](const DynTensor& x, int64_t axis) { return capi::softmax(x, axis, log); });
  };
}

// Hardmax: 1 at the first maximum along the axis, 0 elsewhere: argmax compared with the axis's positions.
Outs hardmax(OpContext& ctx) {
  return along_axis(ctx, [&](const DynTensor& x, int64_t axis) {
    const Shape s = capi::shape(x);
    const DynTensor idx = capi::arg_reduce(x, ArgReduceOp::ArgMax, axis, true);
    std::vector<int64_t> pos_shape(s.rank(), 1);
    pos_shape[static_cast<std::size_t>(axis)] = s[static_cast<std::size_t>(axis)];
    const DynTensor pos = capi::reshape(
        capi::arange(capi::device(idx), capi::dtype(idx), 0, s[static_cast<std::size_t>(axis)], 1), pos_shape);
    return capi::cast(capi::compare(pos, idx, CompareOp::Eq), capi::dtype(x));
  });
}

// CumSum: axis is an input (a scalar). exclusive shifts by one (the sum minus the element itself); reverse sums from
// the end (flip, sum, flip). The runtime's cumsum is float only: integers sum in float64 on the CPU (exact below
// 2^53) and float32 elsewhere.
Outs cumsum_op(OpContext& ctx) {
  const DynTensor& x0 = ctx.input(0);
  const std::vector<int64_t> a = ctx.ints(1);
  if (a.size() != 1) ctx.fail("axis must be a scalar");
  const Shape s = capi::shape(x0);
  const int64_t axis = norm_axis(ctx, a[0], s.rank());
  const DType dt = capi::dtype(x0);
  DynTensor x = x0;
  if (!dtype_is_float(dt)) x = capi::cast(x, capi::device(x).backend == BackendId::Cpu ? DType::F64 : DType::F32);
  const bool reverse = ctx.node.attr_int("reverse", 0) != 0, exclusive = ctx.node.attr_int("exclusive", 0) != 0;
  if (reverse) x = capi::flip(x, {axis});
  DynTensor y = capi::cumsum(x, axis);
  if (exclusive) y = capi::binary(y, x, BinaryOp::Sub);
  if (reverse) y = capi::flip(y, {axis});
  if (!dtype_is_float(dt)) y = capi::cast(y, dt);
  return one(y);
}

Outs einsum_op(OpContext& ctx) {
  std::string eq = ctx.node.attr_string("equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  if (eq.empty()) ctx.fail("attribute 'equation' is required");
  std::vector<const DynTensor*> xs;
  for (std::size_t i = 0; i < ctx.num_inputs(); ++i) xs.push_back(&ctx.input(i));
  return one(capi::einsum(eq, xs));
}

// The cosine-sum windows of opset 17: sum_k a_k cos(2 pi k n / N) for n in [0, size), N = size when periodic
// and size - 1 when symmetric; made on the node's device in float32 and cast to output_datatype.
Converter cosine_window(std::vector<double> coeffs) {
  return [coeffs](OpContext& ctx) -> Outs {
    const std::vector<int64_t> size = ctx.ints(0);
    if (size.size() != 1 || size[0] < 0 || size[0] > (int64_t{1} << 24)) ctx.fail("size must be a scalar in [0, 2^24]");
    const int64_t n = size[0];
    const bool periodic = ctx.node.attr_int("periodic", 1) != 0;
    const double denom = static_cast<double>(periodic ? n : n - 1);
    const DynTensor pos = capi::arange(ctx.device, DType::F32, 0, n, 1);
    DynTensor y = capi::full(ctx.device, DType::F32, Shape{n}, coeffs[0]);
    for (std::size_t k = 1; k < coeffs.size() && denom > 0; ++k) {
      const double w = 2.0 * std::numbers::pi * static_cast<double>(k) / denom;
      const DynTensor term =
          capi::scalar(capi::unary(capi::scalar(pos, ScalarOp::Mul, w), UnaryOp::Cos), ScalarOp::Mul, coeffs[k]);
      y = capi::binary(y, term, BinaryOp::Add);
    }
    return one(capi::cast(y, onnx_elem_dtype(ctx, ctx.node.attr_int("output_datatype", 1))));
  };
}

}  // namespace

void register_tensor_math_ops(OpRegistry& r) {
  r.add("Cast", cast_op);
  r.add("CastLike", cast_like);
  r.add("Where", where_op);
  r.add("Softmax", softmax(false));
  r.add("LogSoftmax", softmax(true));
  r.add("Hardmax", hardmax);
  r.add("CumSum", cumsum_op);
  r.add("Einsum", einsum_op);
  r.add("HannWindow", cosine_window({0.5, -0.5}), 17);
  r.add("HammingWindow", cosine_window({25.0 / 46.0, -21.0 / 46.0}), 17);
  r.add("BlackmanWindow", cosine_window({0.42, -0.5, 0.08}), 17);
}

}  // namespace ember::onnx_import::math
