#version 450
// scatter_add into y (a copy of x): y[line's offset + indices[pos] * xstride[dim]] += values[pos]. One invocation
// per line of the indices' index space, i.e. per (outer, inner) position around `dim`; it walks the line's
// positions along dim in order. Distinct lines hit distinct elements of y (their non-dim coordinates differ), so
// no two invocations write the same element: no atomics, and duplicates accumulate in the CPU's order.
#extension GL_GOOGLE_include_directive : require
#include "index_words.glsl"
#include "common.glsl"

layout(std430, binding = 0) readonly buffer I { int64_t idx[]; };
layout(std430, binding = 1) readonly buffer V { W v[]; };
layout(std430, binding = 2) buffer Y { W y[]; };
layout(push_constant) uniform P {
  uint lines;  // outer * inner
  uint rank;
  uint dim;
  uint inner;  // product of the index dims after dim
  uint shape[MAX_DIMS];
  uint xstride[MAX_DIMS];
} p;

void main() {
  const uint n = p.shape[p.dim];
  FOR_EACH(line, p.lines) {
    const uint first = (line / p.inner) * n * p.inner + line % p.inner;  // position of (outer, 0, inner)
    uint rest = first, base = 0u;
    for (int d = int(p.rank) - 1; d >= 0; --d) {
      base += (rest % p.shape[d]) * p.xstride[d];  // the dim coordinate is 0 here
      rest /= p.shape[d];
    }
    for (uint j = 0u; j < n; ++j) {
      const uint pos = first + j * p.inner;
      const uint at = base + uint(idx[pos]) * p.xstride[p.dim];
      y[at] = ACCUMULATE(y[at], v[pos]);
    }
  }
}
