#version 450
// index_select over x viewed as [outer, size, inner]: output row (o, r) is input row (o, indices[r]).
#extension GL_GOOGLE_include_directive : require
#include "index_words.glsl"
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { W x[]; };
layout(std430, binding = 1) readonly buffer I { int64_t idx[]; };
layout(std430, binding = 2) writeonly buffer Y { W y[]; };
layout(push_constant) uniform P { uint n; uint m; uint size; uint inner; } p;

void main() {
  FOR_EACH(i, p.n) {
    const uint c = i % p.inner, row = i / p.inner;
    const uint o = row / p.m, r = row % p.m;
    y[i] = x[(o * p.size + uint(idx[r])) * p.inner + c];
  }
}
