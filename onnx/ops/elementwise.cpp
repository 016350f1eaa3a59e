// ONNX operators of the elementwise family (h-onnx-math): unary math, arithmetic with NumPy broadcasting, the
// variadic Max/Min/Sum/Mean, comparisons and logic. Activations, Clip, Cast, Where, the Softmax family, CumSum and
// Einsum are in elementwise_activation.cpp / elementwise_misc.cpp, registered from here.
#include <cmath>

#include "onnx/ops/math_util.hpp"

namespace ember::onnx_import {
namespace {

using math::one;
using math::Outs;

Converter unary(UnaryOp op) {
  return [op](OpContext& ctx) { return one(capi::unary(ctx.input(0), op)); };
}
Converter binary(BinaryOp op) {
  return [op](OpContext& ctx) { return one(capi::binary(ctx.input(0), ctx.input(1), op)); };
}
Converter compare(CompareOp op) {
  return [op](OpContext& ctx) { return one(capi::compare(ctx.input(0), ctx.input(1), op)); };
}
Converter logical(LogicOp op) {
  return [op](OpContext& ctx) { return one(capi::logical(ctx.input(0), ctx.input(1), op)); };
}

// Max / Min / Sum / Mean of one or more inputs, broadcast together (opset 8 on; 6's same-shape form is a subset).
Converter variadic(BinaryOp op, bool mean) {
  return [op, mean](OpContext& ctx) {
    if (ctx.num_inputs() == 0) ctx.fail("needs at least one input");
    DynTensor acc = ctx.input(0);
    for (std::size_t i = 1; i < ctx.num_inputs(); ++i) acc = capi::binary(acc, ctx.input(i), op);
    if (mean) acc = capi::scalar(acc, ScalarOp::Div, static_cast<double>(ctx.num_inputs()));
    return one(acc);
  };
}

// Tan has no kernel of its own: sin / cos keeps it differentiable on every backend.
Outs tan_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  return one(capi::binary(capi::unary(x, UnaryOp::Sin), capi::unary(x, UnaryOp::Cos), BinaryOp::Div));
}

// IsInf with detect_positive / detect_negative: +inf only, -inf only, both or neither.
Outs is_inf(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  DynTensor inf = capi::predicate(x, PredicateOp::IsInf);
  const bool pos = ctx.node.attr_int("detect_positive", 1) != 0, neg = ctx.node.attr_int("detect_negative", 1) != 0;
  if (pos && neg) return one(inf);
  if (!pos && !neg) return one(capi::logical(inf, capi::logical_not(inf), LogicOp::And));  // all false
  const DynTensor side = capi::compare_scalar(x, pos ? CompareOp::Gt : CompareOp::Lt, 0.0);
  return one(capi::logical(inf, side, LogicOp::And));
}

// Pow: the result has the base's type (opset 12 on allows an exponent of another numeric type). An integer base
// with a float exponent is computed in float and rounded back, as ONNX's reference does with numpy.
Outs pow_op(OpContext& ctx) {
  const DynTensor& base = ctx.input(0);
  DynTensor expo = ctx.input(1);
  const DType bt = capi::dtype(base);
  if (dtype_is_float(bt) || !math::is_float(expo)) {
    if (capi::dtype(expo) != bt) expo = capi::cast(expo, bt);
    return one(capi::binary(base, expo, BinaryOp::Pow));
  }
  const DynTensor y = capi::binary(capi::cast(base, capi::dtype(expo)), expo, BinaryOp::Pow);
  return one(capi::cast(capi::unary(y, UnaryOp::Round), bt));
}

// Mod: fmod = 0 is Python's % (the divisor's sign), Ember's remainder; fmod = 1 is C's fmod (the dividend's sign),
// derived from the remainder exactly (no float division): r - b where r is non-zero and its sign differs from a's.
Outs mod_op(OpContext& ctx) {
  const DynTensor& a = ctx.input(0);
  const DynTensor& b = ctx.input(1);
  const DynTensor r = capi::binary(a, b, BinaryOp::Remainder);
  if (ctx.node.attr_int("fmod", 0) == 0) return one(r);
  const DynTensor nonzero = capi::compare_scalar(r, CompareOp::Ne, 0.0);
  const DynTensor signs_differ = capi::logical(capi::compare_scalar(r, CompareOp::Lt, 0.0),
                                               capi::compare_scalar(a, CompareOp::Lt, 0.0), LogicOp::Xor);
  const DynTensor fix = capi::logical(nonzero, signs_differ, LogicOp::And);
  return one(capi::where(fix, capi::binary(r, b, BinaryOp::Sub), r));
}

// BitShift on unsigned integers: x * 2^y or x / 2^y (Ember keeps every integer type in one signed kind, so only
// values that fit it shift exactly; ONNX's tests and real models shift small values).
Outs bit_shift(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const DynTensor& y = ctx.input(1);
  if (math::is_float(x) || math::is_float(y)) ctx.fail("BitShift takes integer tensors");
  const std::string dir = ctx.node.attr_string("direction", "");
  if (dir != "LEFT" && dir != "RIGHT") ctx.fail("direction must be LEFT or RIGHT");
  const DynTensor pow2 = capi::binary(math::scalar_like(y, 2.0), y, BinaryOp::Pow);
  return one(capi::binary(x, pow2, dir == "LEFT" ? BinaryOp::Mul : BinaryOp::Div));
}

}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  const std::pair<const char*, UnaryOp> unaries[] = {
      {"Abs", UnaryOp::Abs},     {"Neg", UnaryOp::Neg},        {"Exp", UnaryOp::Exp},
      {"Log", UnaryOp::Log},     {"Sqrt", UnaryOp::Sqrt},      {"Reciprocal", UnaryOp::Recip},
      {"Floor", UnaryOp::Floor}, {"Ceil", UnaryOp::Ceil},      {"Round", UnaryOp::Round},
      {"Sign", UnaryOp::Sign},   {"Sin", UnaryOp::Sin},        {"Cos", UnaryOp::Cos},
      {"Asin", UnaryOp::Asin},   {"Acos", UnaryOp::Acos},      {"Atan", UnaryOp::Atan},
      {"Sinh", UnaryOp::Sinh},   {"Cosh", UnaryOp::Cosh},      {"Asinh", UnaryOp::Asinh},
      {"Acosh", UnaryOp::Acosh}, {"Atanh", UnaryOp::Atanh},    {"Erf", UnaryOp::Erf},
      {"Tanh", UnaryOp::Tanh},   {"Sigmoid", UnaryOp::Sigmoid}};
  for (const auto& [name, op] : unaries) r.add(name, unary(op));
  r.add("Tan", tan_op);
  r.add("Not", [](OpContext& ctx) { return one(capi::logical_not(ctx.input(0))); });
  r.add("IsNaN", [](OpContext& ctx) { return one(capi::predicate(ctx.input(0), PredicateOp::IsNan)); });
  r.add("IsInf", is_inf);

  r.add("Add", binary(BinaryOp::Add));
  r.add("Sub", binary(BinaryOp::Sub));
  r.add("Mul", binary(BinaryOp::Mul));
  r.add("Div", binary(BinaryOp::Div));
  r.add("Pow", pow_op);
  r.add("Mod", mod_op);
  r.add("BitShift", bit_shift);
  r.add("Max", variadic(BinaryOp::Max, false));
  r.add("Min", variadic(BinaryOp::Min, false));
  r.add("Sum", variadic(BinaryOp::Add, false));
  r.add("Mean", variadic(BinaryOp::Add, true));

  r.add("Equal", compare(CompareOp::Eq));
  r.add("Less", compare(CompareOp::Lt));
  r.add("LessOrEqual", compare(CompareOp::Le));
  r.add("Greater", compare(CompareOp::Gt));
  r.add("GreaterOrEqual", compare(CompareOp::Ge));
  r.add("And", logical(LogicOp::And));
  r.add("Or", logical(LogicOp::Or));
  r.add("Xor", logical(LogicOp::Xor));

  math::register_activation_ops(r);
  math::register_tensor_math_ops(r);
  math::register_quant_ops(r);
  math::register_fft_ops(r);
  math::register_grid_sample_ops(r);
}

}  // namespace ember::onnx_import
