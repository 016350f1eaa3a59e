// ONNX's linear quantization operators on uint8 (h-onnx-math): QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, MatMulInteger and ConvInteger. Ember keeps every integer type in one signed kind, so the uint8
// range is enforced here by clamping to [0, 255]; int8 tensors are refused at load (an unsupported dtype). Matmuls of
// integers run in float (float64 on the CPU, exact for uint8 products; float32 on GPUs, exact below 2^24).
#include "onnx/ops/math_util.hpp"

namespace ember::onnx_import::math {
namespace {

// A per-axis parameter (scale / zero point) of C values viewed as [C, 1, ...] so it broadcasts along the node's
// `axis` (default 1) of a rank-`rank` tensor; a single value is a scalar, whatever the axis.
DynTensor along(const OpContext& ctx, const DynTensor& p, std::size_t rank) {
  const Shape s = capi::shape(p);
  if (s.num_elements() == 1) return capi::reshape(p, {});
  if (s.rank() != 1) ctx.fail(fmt::format("a per-axis scale or zero point must be 1-D, got {}", s.to_string()));
  const int64_t axis = norm_axis(ctx, ctx.node.attr_int("axis", 1), rank);
  std::vector<int64_t> dims(rank - static_cast<std::size_t>(axis), 1);
  dims[0] = s[0];
  return capi::reshape(p, dims);
}

DynTensor to_uint8(const DynTensor& x) {
  return capi::cast(capi::scalar(capi::scalar(x, ScalarOp::ClampMin, 0.0), ScalarOp::ClampMax, 255.0), DType::U8);
}

// QuantizeLinear: saturate(round_half_even(x / scale) + zero_point), per tensor or per `axis` (opset 13).
Outs quantize(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::size_t rank = capi::shape(x).rank();
  const DType ft = capi::dtype(x);
  DynTensor y =
      capi::unary(capi::binary(x, along(ctx, capi::cast(ctx.input(1), ft), rank), BinaryOp::Div), UnaryOp::Round);
  if (ctx.has_input(2)) y = capi::binary(y, along(ctx, capi::cast(ctx.input(2), ft), rank), BinaryOp::Add);
  return one(to_uint8(y));
}

// DequantizeLinear: (x - zero_point) * scale, in the scale's float type.
Outs dequantize(OpContext& ctx) {
  const DynTensor& scale = ctx.input(1);
  const DType ft = capi::dtype(scale);
  DynTensor x = capi::cast(ctx.input(0), ft);
  const std::size_t rank = capi::shape(x).rank();
  if (ctx.has_input(2)) x = capi::binary(x, along(ctx, capi::cast(ctx.input(2), ft), rank), BinaryOp::Sub);
  return one(capi::binary(x, along(ctx, scale, rank), BinaryOp::Mul));
}

// DynamicQuantizeLinear: the uint8 scale and zero point of x's range widened to include 0, then x quantized by them.
Outs dynamic_quantize(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const DynTensor lo = capi::scalar(capi::reduce_all(x, ReduceOp::Min), ScalarOp::ClampMax, 0.0);
  const DynTensor hi = capi::scalar(capi::reduce_all(x, ReduceOp::Max), ScalarOp::ClampMin, 0.0);
  const DynTensor scale = capi::scalar(capi::binary(hi, lo, BinaryOp::Sub), ScalarOp::Div, 255.0);
  const DynTensor zp =
      to_uint8(capi::unary(capi::unary(capi::binary(lo, scale, BinaryOp::Div), UnaryOp::Neg), UnaryOp::Round));
  const DynTensor q = capi::unary(capi::binary(x, scale, BinaryOp::Div), UnaryOp::Round);
  const DynTensor y = to_uint8(capi::binary(q, capi::cast(zp, capi::dtype(x)), BinaryOp::Add));
  return Outs{y, scale, zp};
}

// MatMulInteger: (A - a_zero_point) @ (B - b_zero_point) as int32; a's zero point is per row ([M]) or one value,
// b's per column ([N]) or one value.
Outs matmul_integer(OpContext& ctx) {
  const DynTensor& a0 = ctx.input(0);
  const DType ft = capi::device(a0).backend == BackendId::Cpu ? DType::F64 : DType::F32;
  DynTensor a = capi::cast(a0, ft), b = capi::cast(ctx.input(1), ft);
  const Shape sa = capi::shape(a), sb = capi::shape(b);
  if (sa.rank() < 2 || sb.rank() < 2) ctx.fail("A and B must have rank >= 2");
  if (ctx.has_input(2)) {
    DynTensor zp = capi::cast(ctx.input(2), ft);
    const Shape zs = capi::shape(zp);
    zp = zs.num_elements() == 1 ? capi::reshape(zp, {}) : capi::reshape(zp, {zs.num_elements(), 1});
    a = capi::binary(a, zp, BinaryOp::Sub);
  }
  if (ctx.has_input(3)) {
    DynTensor zp = capi::cast(ctx.input(3), ft);
    zp = capi::reshape(zp, capi::shape(zp).num_elements() == 1 ? std::vector<int64_t>{} : capi::shape(zp).dims);
    b = capi::binary(b, zp, BinaryOp::Sub);
  }
  return one(capi::cast(capi::unary(capi::matmul(a, b), UnaryOp::Round), DType::I32));
}

// ConvInteger (2-D): conv of (x - x_zero_point) by (w - w_zero_point) as int32, with Conv's strides, dilations,
// group and symmetric pads (explicit; auto_pad is NOTSET).
Outs conv_integer(OpContext& ctx) {
  const DynTensor& x0 = ctx.input(0);
  const DType ft = capi::device(x0).backend == BackendId::Cpu ? DType::F64 : DType::F32;
  DynTensor x = capi::cast(x0, ft), w = capi::cast(ctx.input(1), ft);
  if (capi::shape(x).rank() != 4 || capi::shape(w).rank() != 4) ctx.fail("only 2-D ConvInteger (rank-4 x and w)");
  if (ctx.node.attr_string("auto_pad", "NOTSET") != "NOTSET") ctx.fail("auto_pad other than NOTSET");
  if (ctx.has_input(2)) x = capi::binary(x, capi::reshape(capi::cast(ctx.input(2), ft), {}), BinaryOp::Sub);
  if (ctx.has_input(3)) {
    DynTensor zp = capi::cast(ctx.input(3), ft);  // one value, or one per output channel
    const int64_t n = capi::shape(zp).num_elements();
    w = capi::binary(w, n == 1 ? capi::reshape(zp, {}) : capi::reshape(zp, {n, 1, 1, 1}), BinaryOp::Sub);
  }
  Conv2dOptions o;
  const auto pair = [&](const char* key, std::array<int64_t, 2>& dst) {
    const std::vector<int64_t> v = ctx.node.attr_ints(key, {dst[0], dst[1]});
    if (v.size() != 2) ctx.fail(fmt::format("{} must have 2 values", key));
    dst = {v[0], v[1]};
  };
  pair("strides", o.stride);
  pair("dilations", o.dilation);
  const std::vector<int64_t> pads = ctx.node.attr_ints("pads", {0, 0, 0, 0});
  if (pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3]) ctx.fail("pads must be 4 symmetric values");
  o.padding = {pads[0], pads[1]};
  o.groups = ctx.node.attr_int("group", 1);
  return one(capi::cast(capi::unary(capi::conv2d(x, w, nullptr, o), UnaryOp::Round), DType::I32));
}

}  // namespace

void register_quant_ops(OpRegistry& r) {
  r.add("QuantizeLinear", quantize, 10);
  r.add("DequantizeLinear", dequantize, 10);
  r.add("DynamicQuantizeLinear", dynamic_quantize, 11);
  r.add("MatMulInteger", matmul_integer, 10);
  r.add("ConvInteger", conv_integer, 10);
}

}  // namespace ember::onnx_import::math
