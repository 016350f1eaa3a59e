#version 450
// y = x (op) s for contiguous tensors (ScalarOp codes). The scalar arrives as float (TYPE_F32) or as int64 split
// into two words (TYPE_I64). Integer division by zero is refused on the host before dispatch.
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
#include "int_math.glsl"

layout(std430, binding = 0) readonly buffer X { T x[]; };
layout(std430, binding = 1) writeonly buffer Y { T y[]; };
layout(push_constant) uniform P { uint n; uint op; float s; uint pad; uvec2 s64; } p;

#ifdef TYPE_I64
T apply(T v, T s) {
  switch (OP) {
    case 0: return v + s;
    case 1: return v - s;
    case 2: return v * s;
    case 3: return int_div(v, s);
    case 4: return int_pow(v, s);
    case 5: return v < s ? s : v;
    case 6: return v > s ? s : v;
    case 7: return s - v;
    case 8: return int_div(s, v);
  }
  return v;
}
#else
float apply(float v, float s) {
  switch (OP) {
    case 0: return v + s;
    case 1: return v - s;
    case 2: return v * s;
    case 3: return v / s;
    case 4: return ember_pow(v, s);
    case 5: return v < s ? s : v;  // NaN passes through
    case 6: return v > s ? s : v;
    case 7: return s - v;
    case 8: return s / v;
  }
  return v;
}
#endif

void main() {
#ifdef TYPE_I64
  const T s = int64_t(packUint2x32(p.s64));
#else
  const T s = p.s;
#endif
  FOR_EACH(i, p.n) y[i] = apply(x[i], s);
}
