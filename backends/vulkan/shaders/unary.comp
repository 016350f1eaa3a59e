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
#include "float_ops.glsl"
float apply(float v) { return unary_f32(OP, v); }
#endif

void main() {
  FOR_EACH(i, p.n) y[i] = apply(x[i]);
}
