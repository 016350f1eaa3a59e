#version 450
// Element type conversion: FROM_* / TO_* in {F32, I64, U32 (Bool words)}. Float to Int truncates toward zero,
// anything to Bool is != 0 (NaN is true), Bool is 0/1.
#extension GL_GOOGLE_include_directive : require
#include "int64.glsl"
#include "common.glsl"

#if defined(FROM_F32)
#define S float
#elif defined(FROM_I64)
#define S int64_t
#else
#define S uint
#endif
#if defined(TO_F32)
#define D float
#elif defined(TO_I64)
#define D int64_t
#else
#define D uint
#endif

layout(std430, binding = 0) readonly buffer X { S x[]; };
layout(std430, binding = 1) writeonly buffer Y { D y[]; };
layout(push_constant) uniform P { uint n; } p;

D convert(S v) {
#if defined(TO_U32)
#if defined(FROM_F32)
  return (v != 0.0 || isnan(v)) ? 1u : 0u;
#else
  return v != S(0) ? 1u : 0u;
#endif
#else
  return D(v);
#endif
}

void main() {
  FOR_EACH(i, p.n) y[i] = convert(x[i]);
}
