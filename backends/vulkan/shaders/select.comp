#version 450
// where / mask_fill over contiguous operands of the output's shape (select.cpp expands broadcast operands first).
// where:     y[i] = c[i] != 0 ? a[i] : b[i]
// MASK_FILL: y[i] = m[i] != 0 ? value : x[i]
// Elements are raw words (WORD64 for int64, 32-bit for float / Bool).
#extension GL_GOOGLE_include_directive : require
#ifdef WORD64
#define W uvec2
#else
#define W uint
#endif
#include "common.glsl"

layout(std430, binding = 0) readonly buffer C { uint c[]; };
layout(std430, binding = 1) readonly buffer A { W a[]; };
layout(std430, binding = 2) readonly buffer B { W b[]; };
layout(std430, binding = 3) writeonly buffer Y { W y[]; };
layout(push_constant) uniform P { uint n; uint pad; uvec2 value; } p;

void main() {
#ifdef MASK_FILL
#ifdef WORD64
  const W v = p.value;
#else
  const W v = p.value.x;
#endif
  FOR_EACH(i, p.n) y[i] = c[i] != 0u ? v : a[i];
#else
  FOR_EACH(i, p.n) y[i] = c[i] != 0u ? a[i] : b[i];
#endif
}
