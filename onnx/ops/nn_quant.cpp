// The quantized linear operators QLinearConv and QLinearMatMul (h-onnx-nn; ConvInteger / MatMulInteger are
// h-onnx-math's, onnx/ops/elementwise_quant.cpp).
//
// Ember has no integer GEMM or convolution, so the uint8 operands are shifted by their zero points and multiplied
// as floats: F64 on the CPU, exact for every sum of uint8 products below 2^53 (F32 on GPU backends, exact below
// 2^24). Padding after the shift is the zero point, as ONNX Runtime does. Then they requantize:
// round half to even (the runtime's Round) of acc * x_scale * w_scale / y_scale, plus y_zero_point, saturated to
// uint8 (int8 tensors are not importable, so uint8 is the only 8-bit type that reaches here).
#include <fmt/format.h>

#include "onnx/ops/nn_common.hpp"

namespace ember::onnx_import::nn_ops {
namespace {

DynTensor as_exact(const DynTensor& t, DType to) { return capi::dtype(t) == to ? t : capi::cast(t, to); }

// x - zero_point, where the zero point (input i, optional) is a scalar or one value per `axis` of a rank-r operand.
DynTensor shifted(const OpContext& ctx, const DynTensor& x, std::size_t zp, DType ft, int64_t axis) {
  const DynTensor xf = as_exact(x, ft);
  if (!ctx.has_input(zp)) return xf;
  DynTensor z = as_exact(ctx.input(zp), ft);
  const int64_t n = capi::shape(z).num_elements(), r = rank_of(x);
  if (n != 1) {
    if (axis < 0 || axis >= r || dims_of(x)[axis] != n)
      ctx.fail(fmt::format("zero point (input {}) has {} values; expected 1 or one per dim {}", zp, n, axis));
    std::vector<int64_t> d(static_cast<std::size_t>(r), 1);
    d[axis] = n;
    z = capi::reshape(z, d);
  } else {
    z = capi::reshape(z, {1});
  }
  return capi::binary(xf, z, BinaryOp::Sub);
}

// acc * (prod of the scales) / y_scale, rounded, shifted by y_zero_point, saturated to uint8. `channel`: the dim of
// acc that a per-channel scale runs along.
DynTensor requantize(const OpContext& ctx, DynTensor acc, const std::vector<std::pair<std::size_t, int64_t>>& scales,
                     std::size_t y_scale, std::size_t y_zp, DType ft) {
  const int64_t r = rank_of(acc);
  for (const auto& [i, dim] : scales) {
    DynTensor s = as_exact(ctx.input(i), ft);
    const int64_t n = capi::shape(s).num_elements();
    std::vector<int64_t> d(static_cast<std::size_t>(r), 1);
    if (n != 1) {
      if (dim < 0 || dim >= r || dims_of(acc)[dim] != n) ctx.fail(fmt::format("scale (input {}) has {} values", i, n));
      d[dim] = n;
    }
    acc = capi::binary(acc, capi::reshape(s, d), BinaryOp::Mul);
  }
  acc = capi::binary(acc, capi::reshape(as_exact(ctx.input(y_scale), ft), {1}), BinaryOp::Div);
  DynTensor y = capi::unary(acc, UnaryOp::Round);
  if (ctx.has_input(y_zp)) y = capi::binary(y, capi::reshape(as_exact(ctx.input(y_zp), ft), {1}), BinaryOp::Add);
  y = capi::scalar(capi::scalar(y, ScalarOp::ClampMin, 0.0), ScalarOp::ClampMax, 255.0);
  return capi::cast(y, DType::U8);
}

// MatMul of zero-point-shifted operands: a's zero point per row (dim -2), b's per column (dim -1).
DynTensor matmul_shifted(const OpContext& ctx, std::size_t a, std::size_t a_zp, std::size_t b, std::size_t b_zp) {
  const DynTensor& x = ctx.input(a);
  const DynTensor& w = ctx.input(b);
  if (rank_of(x) < 2 || rank_of(w) < 2) ctx.fail("operands must be at least 2-D");
  const DType ft = exact_float_for(x);
  return capi::matmul(shifted(ctx, x, a_zp, ft, rank_of(x) - 2), shifted(ctx, w, b_zp, ft, rank_of(w) - 1));
}

Outputs qlinear_matmul(OpContext& ctx) {
  const DynTensor acc = matmul_shifted(ctx, 0, 2, 3, 5);
  const int64_t r = rank_of(acc);
  return {requantize(ctx, acc, {{1, r - 2}, {4, r - 1}}, 6, 7, exact_float_for(acc))};
}

Outputs qlinear_conv(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const DType ft = exact_float_for(x);
  const DynTensor bias = ctx.has_input(8) ? as_exact(ctx.input(8), ft) : DynTensor{};
  const DynTensor acc = conv_forward(ctx, shifted(ctx, x, 2, ft, -1), shifted(ctx, ctx.input(3), 5, ft, 0),
                                     ctx.has_input(8) ? &bias : nullptr);
  return {requantize(ctx, acc, {{1, -1}, {4, 1}}, 6, 7, ft)};
}

}  // namespace

void register_quant(OpRegistry& r) {
  r.add("QLinearMatMul", qlinear_matmul, 10);
  r.add("QLinearConv", qlinear_conv, 10);
}

}  // namespace ember::onnx_import::nn_ops
