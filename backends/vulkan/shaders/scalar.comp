#version 450
// y = x (op) s for contiguous tensors (ScalarOp codes). The scalar arrives as float (TYPE_F32) or as int64 split
// into two words (TYPE_I64). Integer division by zero is refused on the host before dispatch.
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
#include "int_math.glsl"

layout(std430, binding = 0) readonly buffer X { T x[]; };
layout(std430, binding = 1) writeonly buffer Y { T y[]; };
layout(push_constant) uniform P { uint n; uint op; float s; uint pad; uvec2 s64; } p;

#ifdef TYPE_I64
T apply(T v, T s) {
  switch (OP) {
    case SCALAR_ADD: return v + s;
    case SCALAR_SUB: return v - s;
    case SCALAR_MUL: return v * s;
    case SCALAR_DIV: return int_div(v, s);
    case SCALAR_POW: return int_pow(v, s);
    case SCALAR_CLAMP_MIN: return v < s ? s : v;
    case SCALAR_CLAMP_MAX: return v > s ? s : v;
    case SCALAR_RSUB: return s - v;
    case SCALAR_RDIV: return int_div(s, v);
    case SCALAR_REMAINDER: return int_remainder(v, s);
  }
  return v;
}
#else
#include "float_ops.glsl"
float apply(float v, float s) { return scalar_f32(OP, v, s); }
#endif

void main() {
#ifdef TYPE_I64
  const T s = INT_FROM_WORDS(p.s64);
#else
  const T s = p.s;
#endif
  FOR_EACH(i, p.n) y[i] = apply(x[i], s);
}
