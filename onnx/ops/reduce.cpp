// ONNX operators of the reduce family (h-onnx-math): Reduce{Sum,Mean,Max,Min,Prod,L1,L2,LogSum,LogSumExp,
// SumSquare} and ArgMax / ArgMin, on the runtime's per-dim reductions. Axes are an attribute until the opset where
// they became an optional input (ReduceSum 13, the others 18), which also brought noop_with_empty_axes.
#include <algorithm>
#include <set>

#include "onnx/ops/math_util.hpp"

namespace ember::onnx_import {
namespace {

using math::one;
using math::Outs;

// The axes a Reduce* node reduces, normalised and sorted; empty when it reduces nothing (noop_with_empty_axes).
std::vector<int64_t> reduce_axes(const OpContext& ctx, std::size_t rank, bool axes_from_input) {
  std::vector<int64_t> axes;
  if (axes_from_input) {
    if (ctx.has_input(1)) axes = ctx.ints(1);
    if (axes.empty() && ctx.node.attr_int("noop_with_empty_axes", 0) != 0) return {};
  } else {
    axes = ctx.node.attr_ints("axes");
  }
  std::set<int64_t> out;
  if (axes.empty())
    for (std::size_t i = 0; i < rank; ++i) out.insert(static_cast<int64_t>(i));
  for (int64_t a : axes)
    if (!out.insert(math::norm_axis(ctx, a, rank, "axes entry")).second) ctx.fail(fmt::format("axis {} repeats", a));
  return {out.begin(), out.end()};
}

// x reduced with `op` along each of `axes` (kept as size-1 dims), then those dims dropped unless keepdims.
DynTensor reduce_dims(const DynTensor& x, ReduceOp op, const std::vector<int64_t>& axes, bool keepdims) {
  DynTensor y = x;
  for (int64_t a : axes) y = capi::reduce(y, op, a, true);
  if (keepdims) return y;
  std::vector<int64_t> dims;
  const Shape s = capi::shape(y);
  for (std::size_t i = 0; i < s.rank(); ++i)
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i))) dims.push_back(s[i]);
  return capi::reshape(y, dims);
}

// The Reduce* operators as: pre(x), reduced with `op`, then post(y).
enum class Pre { None, Abs, Square };
enum class Post { None, Sqrt, Log };

Converter reduction(ReduceOp op, Pre pre, Post post, bool axes_from_input) {
  return [=](OpContext& ctx) -> Outs {
    DynTensor x = ctx.input(0);
    const Shape s = capi::shape(x);
    const bool keepdims = ctx.node.attr_int("keepdims", 1) != 0;
    const std::vector<int64_t> axes = reduce_axes(ctx, s.rank(), axes_from_input);
    if (axes.empty()) return one(x);  // noop_with_empty_axes (or a scalar): the input as it is
    if (pre == Pre::Abs) x = capi::unary(x, UnaryOp::Abs);
    if (pre == Pre::Square) x = capi::binary(x, x, BinaryOp::Mul);
    DynTensor y = reduce_dims(x, op, axes, keepdims);
    if (post == Post::Sqrt) y = capi::unary(y, UnaryOp::Sqrt);
    if (post == Post::Log) y = capi::unary(y, UnaryOp::Log);
    return one(y);
  };
}

// ReduceLogSumExp on the runtime's stable logsumexp (max-shifted), which reduces several dims at once.
Converter log_sum_exp(bool axes_from_input) {
  return [=](OpContext& ctx) -> Outs {
    const DynTensor& x = ctx.input(0);
    const Shape s = capi::shape(x);
    const bool keepdims = ctx.node.attr_int("keepdims", 1) != 0;
    const std::vector<int64_t> axes = reduce_axes(ctx, s.rank(), axes_from_input);
    if (axes.empty()) return one(x);
    return one(capi::logsumexp(x, axes, keepdims));
  };
}

// ArgMax / ArgMin: int64 indices along `axis`; ties give the first index, or the last with select_last_index
// (the flipped input's first, mirrored back).
Converter arg_reduce(ArgReduceOp op) {
  return [op](OpContext& ctx) -> Outs {
    const DynTensor& x = ctx.input(0);
    const Shape s = capi::shape(x);
    const int64_t axis = math::norm_axis(ctx, ctx.node.attr_int("axis", 0), s.rank());
    const bool keepdims = ctx.node.attr_int("keepdims", 1) != 0;
    if (ctx.node.attr_int("select_last_index", 0) == 0) return one(capi::arg_reduce(x, op, axis, keepdims));
    const DynTensor idx = capi::arg_reduce(capi::flip(x, {axis}), op, axis, keepdims);
    const int64_t last = s.rank() ? s[static_cast<std::size_t>(axis)] - 1 : 0;
    return one(capi::scalar(idx, ScalarOp::RSub, static_cast<double>(last)));
  };
}

}  // namespace

void register_reduce_ops(OpRegistry& r) {
  struct Row {
    const char* name;
    ReduceOp op;
    Pre pre;
    Post post;
    int64_t axes_input_since;
  };
  const Row rows[] = {
      {"ReduceSum", ReduceOp::Sum, Pre::None, Post::None, 13},
      {"ReduceMean", ReduceOp::Mean, Pre::None, Post::None, 18},
      {"ReduceMax", ReduceOp::Max, Pre::None, Post::None, 18},
      {"ReduceMin", ReduceOp::Min, Pre::None, Post::None, 18},
      {"ReduceProd", ReduceOp::Prod, Pre::None, Post::None, 18},
      {"ReduceL1", ReduceOp::Sum, Pre::Abs, Post::None, 18},
      {"ReduceL2", ReduceOp::Sum, Pre::Square, Post::Sqrt, 18},
      {"ReduceLogSum", ReduceOp::Sum, Pre::None, Post::Log, 18},
      {"ReduceSumSquare", ReduceOp::Sum, Pre::Square, Post::None, 18},
  };
  for (const Row& row : rows) {
    r.add(row.name, reduction(row.op, row.pre, row.post, false), 1, row.axes_input_since - 1);
    r.add(row.name, reduction(row.op, row.pre, row.post, true), row.axes_input_since);
  }
  r.add("ReduceLogSumExp", log_sum_exp(false), 1, 17);
  r.add("ReduceLogSumExp", log_sum_exp(true), 18);
  r.add("ArgMax", arg_reduce(ArgReduceOp::ArgMax));
  r.add("ArgMin", arg_reduce(ArgReduceOp::ArgMin));
  math::register_loss_ops(r);
  math::register_det_ops(r);
  math::register_nms_ops(r);
  math::register_unpool_ops(r);
}

}  // namespace ember::onnx_import
