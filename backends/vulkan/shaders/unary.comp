#version 450
// y = op(x) for contiguous tensors; one variant per element type (TYPE_F32 / TYPE_I64). Op codes: UnaryOp.
#extension GL_GOOGLE_include_directive : require
#ifdef TYPE_I64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define T int64_t
#else
#define T float
#endif
#include "common.glsl"
// The op code is a specialization constant: each op gets its own pipeline with the switch folded away, instead of
// every element branching on a push constant (costly on SIMD-emulating devices such as lavapipe).
layout(constant_id = 1) const uint OP = 0u;
#include "math.glsl"

layout(std430, binding = 0) readonly buffer X { T x[]; };
layout(std430, binding = 1) writeonly buffer Y { T y[]; };
layout(push_constant) uniform P { uint n; uint op; } p;

#ifdef TYPE_I64
T apply(T v) {
  switch (OP) {
    case 0: return -v;  // wraps for INT64_MIN (two's complement), like the CPU
    case 1: return v < 0 ? -v : v;
    case 12: return T(v > 0) - T(v < 0);
  }
  return v;
}
#else
float apply(float v) {
  switch (OP) {
    case 0: return -v;
    case 1: return abs(v);
    case 2: return ember_exp(v);
    case 3: return ember_log(v);
    case 4: return ember_log1p(v);
    case 5: return ember_sqrt(v);
    case 6: return isinf(v) ? F_NAN : sin(v);
    case 7: return isinf(v) ? F_NAN : cos(v);
    case 8: return ember_tanh(v);
    case 9: return 1.0 / (1.0 + ember_exp(-v));
    case 10: return ember_erf(v);
    case 11: return 1.0 / v;
    case 12: return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : v);  // keeps NaN and signed zero
    case 13: return floor(v);
    case 14: return ceil(v);
    case 15: return roundEven(v);
    case 16: return v < 0.0 ? 0.0 : v;  // NaN passes through
    case 17: return 0.5 * v * (1.0 + ember_erf(v * 0.70710678118654752));
    case 18: return 0.5 * v * (1.0 + ember_tanh(0.79788456080286536 * (v + 0.044715 * v * v * v)));
  }
  return v;
}
#endif

void main() {
  FOR_EACH(i, p.n) y[i] = apply(x[i]);
}
