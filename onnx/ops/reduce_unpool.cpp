// ONNX's MaxUnpool (h-onnx-math, registered with the reductions): MaxPool's values put back at its flat indices
// (which count over the whole [N, C, H, W] output, batch and channel included) in zeros of the unpooled shape, by
// one scatter_add, so the gradient reaches the pooled values. An output_shape larger than the inferred one pads
// the end of each spatial dim (the indices still count in the inferred shape, as ONNX's example shows).
#include "onnx/ops/math_util.hpp"

namespace ember::onnx_import {
namespace {

math::Outs max_unpool(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const DynTensor& indices = ctx.input(1);
  const Shape xs = capi::shape(x);
  if (xs.rank() < 3) ctx.fail(fmt::format("X must be [N, C, spatial...], got {}", xs.to_string()));
  if (capi::shape(indices) != xs) ctx.fail("I must have X's shape");
  const std::size_t spatial = xs.rank() - 2;
  // The unpooled shape the indices count in, from kernel_shape / strides / pads.
  std::vector<int64_t> inferred = xs.dims;
  const std::vector<int64_t> kernel = ctx.node.attr_ints("kernel_shape");
  const std::vector<int64_t> strides = ctx.node.attr_ints("strides", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> pads = ctx.node.attr_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  if (kernel.size() != spatial || strides.size() != spatial || pads.size() != 2 * spatial)
    ctx.fail("kernel_shape, strides and pads must match the spatial rank");
  for (std::size_t i = 0; i < spatial; ++i)
    inferred[i + 2] = (xs[i + 2] - 1) * strides[i] + kernel[i] - pads[i] - pads[i + spatial];
  const Shape is(inferred);
  const DynTensor zeros = capi::full(capi::device(x), capi::dtype(x), Shape{is.num_elements()}, 0.0);
  const DynTensor flat =
      capi::scatter_add(zeros, 0, capi::reshape(indices, {xs.num_elements()}), capi::reshape(x, {xs.num_elements()}));
  const DynTensor y = capi::reshape(flat, inferred);
  if (!ctx.has_input(2)) return math::one(y);
  // An explicit output_shape (at least the inferred one) extends it with zeros at the end of each spatial dim.
  const std::vector<int64_t> out = ctx.ints(2);
  if (out.size() != xs.rank() || out[0] != xs[0] || out[1] != xs[1])
    ctx.fail(fmt::format("output_shape must have {} values and keep N and C", xs.rank()));
  std::vector<int64_t> torch_pads;  // (left, right) from the last dim
  for (std::size_t i = xs.rank(); i-- > 2;) {
    if (out[i] < inferred[i]) ctx.fail("output_shape is smaller than the unpooled shape");
    torch_pads.insert(torch_pads.end(), {0, out[i] - inferred[i]});
  }
  return math::one(capi::pad(y, torch_pads, PadMode::Constant, 0.0));
}

}  // namespace

namespace math {
void register_unpool_ops(OpRegistry& r) { r.add("MaxUnpool", max_unpool, 9); }
}  // namespace math

}  // namespace ember::onnx_import
