#version 450
// index_select_add (select_assign) into y (a copy of x), both viewed as [outer, size, inner] and values as
// [outer, m, inner]: y row (o, indices[i]) += values row (o, i). One invocation per column (o, c) walks i in order,
// so repeated indices accumulate in the CPU's order and no two invocations write the same element (no atomics);
// neighbouring invocations touch neighbouring columns, so the accesses coalesce.
#extension GL_GOOGLE_include_directive : require
#include "index_words.glsl"
#include "common.glsl"

layout(std430, binding = 0) readonly buffer I { int64_t idx[]; };
layout(std430, binding = 1) readonly buffer V { W v[]; };
layout(std430, binding = 2) buffer Y { W y[]; };
layout(push_constant) uniform P { uint lines; uint m; uint size; uint inner; } p;

void main() {
  FOR_EACH(line, p.lines) {
    const uint o = line / p.inner, c = line % p.inner;
    for (uint i = 0u; i < p.m; ++i) {
      const uint at = (o * p.size + uint(idx[i])) * p.inner + c;
      y[at] = ACCUMULATE(y[at], v[(o * p.m + i) * p.inner + c]);
    }
  }
}
