#version 450
// y = op(x) for contiguous tensors; one variant per element type (TYPE_F32 / TYPE_I64). Op codes: UnaryOp (op_codes.glsl).
// PREDICATE (with TYPE_F32): y = test(x) as Bool words, op codes PredicateOp (isnan, isinf).
#extension GL_GOOGLE_include_directive : require
#ifdef TYPE_I64
#include "int64.glsl"
#define T int64_t
#else
#define T float
#endif
#include "common.glsl"
#include "op_codes.glsl"
// The op code is a specialization constant: each op gets its own pipeline with the switch folded away, instead of
// every element branching on a push constant (costly on SIMD-emulating devices such as lavapipe).
layout(constant_id = 1) const uint OP = 0u;
#include "math.glsl"
#include "math_trig.glsl"

#ifdef PREDICATE
#define OUT uint
#else
#define OUT T
#endif

layout(std430, binding = 0) readonly buffer X { T x[]; };
layout(std430, binding = 1) writeonly buffer Y { OUT y[]; };
layout(push_constant) uniform P { uint n; uint op; } p;

#if defined(PREDICATE)
uint apply(float v) {
  switch (OP) {
    case PREDICATE_ISNAN: return uint(isnan(v));
    case PREDICATE_ISINF: return uint(isinf(v));
  }
  return 0u;
}
#elif defined(TYPE_I64)
T apply(T v) {
  switch (OP) {
    case UNARY_NEG: return -v;  // wraps for INT64_MIN (two's complement), like the CPU
    case UNARY_ABS: return v < 0 ? -v : v;
    case UNARY_SIGN: return T(v > 0) - T(v < 0);
  }
  return v;
}
#else
float apply(float v) {
  switch (OP) {
    case UNARY_NEG: return -v;
    case UNARY_ABS: return abs(v);
    case UNARY_EXP: return ember_exp(v);
    case UNARY_LOG: return ember_log(v);
    case UNARY_LOG1P: return ember_log1p(v);
    case UNARY_SQRT: return ember_sqrt(v);
    case UNARY_SIN: return isinf(v) ? F_NAN : sin(v);
    case UNARY_COS: return isinf(v) ? F_NAN : cos(v);
    case UNARY_TANH: return ember_tanh(v);
    case UNARY_SIGMOID: return 1.0 / (1.0 + ember_exp(-v));
    case UNARY_ERF: return ember_erf(v);
    case UNARY_RECIP: return 1.0 / v;
    case UNARY_SIGN: return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : v);  // keeps NaN and signed zero
    case UNARY_FLOOR: return floor(v);
    case UNARY_CEIL: return ceil(v);
    case UNARY_ROUND: return roundEven(v);
    case UNARY_RELU: return v < 0.0 ? 0.0 : v;  // NaN passes through
    case UNARY_GELU: return 0.5 * v * (1.0 + ember_erf(v * 0.70710678118654752));
    case UNARY_GELU_TANH: return 0.5 * v * (1.0 + ember_tanh(0.79788456080286536 * (v + 0.044715 * v * v * v)));
    case UNARY_ASIN: return ember_asin(v);
    case UNARY_ACOS: return ember_acos(v);
    case UNARY_ATAN: return ember_atan(v);
    case UNARY_SINH: return ember_sinh(v);
    case UNARY_COSH: return ember_cosh(v);
    case UNARY_ASINH: return ember_asinh(v);
    case UNARY_ACOSH: return ember_acosh(v);
    case UNARY_ATANH: return ember_atanh(v);
  }
  return v;
}
#endif

void main() {
  FOR_EACH(i, p.n) y[i] = apply(x[i]);
}
