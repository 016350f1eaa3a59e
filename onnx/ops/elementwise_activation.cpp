// ONNX activations and Clip (h-onnx-math), composed from the runtime's elementwise ops so they run and differentiate
// on every backend. Branches go through `where`, which routes each element's gradient to the branch it took; an
// exp that only matters for x <= 0 is taken of min(x, 0) so the unused branch cannot overflow into 0 * inf = NaN.
#include "onnx/ops/math_util.hpp"

namespace ember::onnx_import::math {
namespace {

DynTensor mul_s(const DynTensor& x, double s) { return capi::scalar(x, ScalarOp::Mul, s); }
DynTensor add_s(const DynTensor& x, double s) { return capi::scalar(x, ScalarOp::Add, s); }
DynTensor exp_nonpos(const DynTensor& x) { return capi::unary(capi::scalar(x, ScalarOp::ClampMax, 0.0), UnaryOp::Exp); }
DynTensor zeros_like(const DynTensor& x) { return scalar_like(x, 0.0); }

Outs relu(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  // Opset 14 adds integer inputs, which the Relu kernel (float only) does not take: clamp them.
  return one(is_float(x) ? capi::unary(x, UnaryOp::Relu) : capi::scalar(x, ScalarOp::ClampMin, 0.0));
}

Outs leaky_relu(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const double alpha = ctx.node.attr_float("alpha", 0.01);
  return one(capi::where(capi::compare_scalar(x, CompareOp::Lt, 0.0), mul_s(x, alpha), x));
}

// PRelu: slope broadcasts to x (unidirectionally). Before opset 7 a 1-D slope of C values was per channel (dim 1),
// which old PyTorch exports rely on: it is viewed as [C, 1, ...] then.
Outs prelu(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  DynTensor slope = ctx.input(1);
  const Shape xs = capi::shape(x), ss = capi::shape(slope);
  if (ctx.opset < 7 && ss.rank() == 1 && ss[0] > 1 && xs.rank() >= 2 && xs[1] == ss[0]) {
    std::vector<int64_t> dims(xs.rank() - 1, 1);
    dims[0] = ss[0];
    slope = capi::reshape(slope, dims);
  }
  return one(capi::where(capi::compare_scalar(x, CompareOp::Lt, 0.0), capi::binary(x, slope, BinaryOp::Mul), x));
}

Outs elu(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const double alpha = ctx.node.attr_float("alpha", 1.0);
  const DynTensor neg = mul_s(add_s(exp_nonpos(x), -1.0), alpha);
  return one(capi::where(capi::compare_scalar(x, CompareOp::Lt, 0.0), neg, x));
}

Outs selu(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const double alpha = ctx.node.attr_float("alpha", 1.67326319217681884765625);
  const double gamma = ctx.node.attr_float("gamma", 1.05070102214813232421875);
  const DynTensor neg = mul_s(add_s(exp_nonpos(x), -1.0), alpha);
  return one(mul_s(capi::where(capi::compare_scalar(x, CompareOp::Le, 0.0), neg, x), gamma));
}

// Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
Outs celu(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const double alpha = ctx.node.attr_float("alpha", 1.0);
  if (alpha == 0.0) ctx.fail("alpha must not be 0");
  const DynTensor neg = mul_s(add_s(exp_nonpos(mul_s(x, 1.0 / alpha)), -1.0), alpha);
  return one(capi::where(capi::compare_scalar(x, CompareOp::Lt, 0.0), neg, x));
}

DynTensor hard_sigmoid_of(const DynTensor& x, double alpha, double beta) {
  return capi::scalar(capi::scalar(add_s(mul_s(x, alpha), beta), ScalarOp::ClampMin, 0.0), ScalarOp::ClampMax, 1.0);
}

Outs hard_sigmoid(OpContext& ctx) {
  return one(hard_sigmoid_of(ctx.input(0), ctx.node.attr_float("alpha", 0.2), ctx.node.attr_float("beta", 0.5)));
}

Outs hard_swish(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  return one(capi::binary(x, hard_sigmoid_of(x, 1.0 / 6.0, 0.5), BinaryOp::Mul));
}

// log(1 + exp(x)) as relu(x) + log1p(exp(-|x|)): no overflow for large x.
DynTensor softplus_of(const DynTensor& x) {
  const DynTensor tail =
      capi::unary(capi::unary(capi::unary(capi::unary(x, UnaryOp::Abs), UnaryOp::Neg), UnaryOp::Exp), UnaryOp::Log1p);
  return capi::binary(capi::unary(x, UnaryOp::Relu), tail, BinaryOp::Add);
}

Outs softplus(OpContext& ctx) { return one(softplus_of(ctx.input(0))); }

Outs softsign(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  return one(capi::binary(x, add_s(capi::unary(x, UnaryOp::Abs), 1.0), BinaryOp::Div));
}

Outs thresholded_relu(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const double alpha = ctx.node.attr_float("alpha", 1.0);
  return one(capi::where(capi::compare_scalar(x, CompareOp::Gt, alpha), x, zeros_like(x)));
}

Outs mish(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  return one(capi::binary(x, capi::unary(softplus_of(x), UnaryOp::Tanh), BinaryOp::Mul));
}

// Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
Outs shrink(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const double bias = ctx.node.attr_float("bias", 0.0), lambd = ctx.node.attr_float("lambd", 0.5);
  const DynTensor above =
      capi::where(capi::compare_scalar(x, CompareOp::Gt, lambd), capi::scalar(x, ScalarOp::Sub, bias), zeros_like(x));
  return one(capi::where(capi::compare_scalar(x, CompareOp::Lt, -lambd), capi::scalar(x, ScalarOp::Add, bias), above));
}

// Clip: min/max are attributes before opset 11 and optional inputs from 11; min(max(x, lo), hi) as ONNX defines
// it. Input bounds stay tensors (binary max/min) so nothing is read back from a GPU.
Outs clip_attrs(OpContext& ctx) {
  DynTensor y = ctx.input(0);
  if (ctx.node.has_attr("min")) y = capi::scalar(y, ScalarOp::ClampMin, ctx.node.attr_float("min", 0.0));
  if (ctx.node.has_attr("max")) y = capi::scalar(y, ScalarOp::ClampMax, ctx.node.attr_float("max", 0.0));
  return one(y);
}

Outs clip_inputs(OpContext& ctx) {
  DynTensor y = ctx.input(0);
  const DType dt = capi::dtype(y);
  const auto bound = [&](std::size_t i) {
    DynTensor b = ctx.input(i);
    if (capi::shape(b).num_elements() != 1) ctx.fail(fmt::format("input {} must be a scalar", i));
    if (capi::dtype(b) != dt) b = capi::cast(b, dt);
    return capi::reshape(b, {});
  };
  if (ctx.has_input(1)) y = capi::binary(y, bound(1), BinaryOp::Max);
  if (ctx.has_input(2)) y = capi::binary(y, bound(2), BinaryOp::Min);
  return one(y);
}

}  // namespace

void register_activation_ops(OpRegistry& r) {
  r.add("Relu", relu);
  r.add("LeakyRelu", leaky_relu);
  r.add("PRelu", prelu);
  r.add("Elu", elu);
  r.add("Selu", selu);
  r.add("Celu", celu);
  r.add("HardSigmoid", hard_sigmoid);
  r.add("HardSwish", hard_swish);
  r.add("Softplus", softplus);
  r.add("Softsign", softsign);
  r.add("ThresholdedRelu", thresholded_relu);
  r.add("Mish", mish);
  r.add("Shrink", shrink);
  r.add("Clip", clip_attrs, 1, 10);
  r.add("Clip", clip_inputs, 11);
}

}  // namespace ember::onnx_import::math
