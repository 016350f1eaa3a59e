#version 450
// y[i] = value (raw words: WORD64 for int64, 32-bit for float / Bool) or, with ARANGE, y[i] = start + i (int64).
#extension GL_GOOGLE_include_directive : require
#if defined(ARANGE)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif
#if defined(WORD64) || defined(ARANGE)
#define W uvec2
#else
#define W uint
#endif
#include "common.glsl"

layout(std430, binding = 0) writeonly buffer Y { W y[]; };
layout(push_constant) uniform P { uint n; uint pad; uvec2 value; } p;

void main() {
#if defined(ARANGE)
  const int64_t start = int64_t(packUint2x32(p.value));
  FOR_EACH(i, p.n) y[i] = unpackUint2x32(uint64_t(start + int64_t(i)));
#elif defined(WORD64)
  FOR_EACH(i, p.n) y[i] = p.value;
#else
  FOR_EACH(i, p.n) y[i] = p.value.x;
#endif
}
