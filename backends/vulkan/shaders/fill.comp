#version 450
// y[i] = value (raw words: WORD64 for int64, 32-bit for float / Bool) or, with ARANGE, y[i] = start + i (int64).
#extension GL_GOOGLE_include_directive : require
#if defined(ARANGE)
#include "int64.glsl"
#endif
#if defined(WORD64) || (defined(ARANGE) && !defined(EMBER_NO_INT64))
#define W uvec2
#else
#define W uint
#endif
#include "common.glsl"

layout(std430, binding = 0) writeonly buffer Y { W y[]; };
layout(push_constant) uniform P { uint n; uint pad; uvec2 value; } p;

void main() {
#if defined(ARANGE)
  const int64_t start = INT_FROM_WORDS(p.value);
#ifdef EMBER_NO_INT64
  FOR_EACH(i, p.n) y[i] = uint(start + int(i));
#else
  FOR_EACH(i, p.n) y[i] = unpackUint2x32(uint64_t(start + int64_t(i)));
#endif
#elif defined(WORD64)
  FOR_EACH(i, p.n) y[i] = p.value;
#else
  FOR_EACH(i, p.n) y[i] = p.value.x;
#endif
}
