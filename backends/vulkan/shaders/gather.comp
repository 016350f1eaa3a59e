#version 450
// gather: y[i] = x[offset of i's multi-index (over the indices' dims) with the `dim` coordinate replaced by
// indices[i]]. The index space is the indices' shape after merging (indexing.cpp); x is read through its strides,
// so indices smaller than x in the other dims select a sub-box. Index values were range-checked beforehand.
#extension GL_GOOGLE_include_directive : require
#include "index_words.glsl"
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { W x[]; };
layout(std430, binding = 1) readonly buffer I { int64_t idx[]; };
layout(std430, binding = 2) writeonly buffer Y { W y[]; };
layout(push_constant) uniform P {
  uint n;
  uint rank;
  uint dim;
  uint pad;
  uint shape[MAX_DIMS];    // the (merged) indices' dims
  uint xstride[MAX_DIMS];  // x's strides for those dims
} p;

void main() {
  FOR_EACH(i, p.n) {
    uint rest = i, off = 0u;
    for (int d = int(p.rank) - 1; d >= 0; --d) {
      const uint c = rest % p.shape[d];
      rest /= p.shape[d];
      if (uint(d) != p.dim) off += c * p.xstride[d];
    }
    y[i] = x[off + uint(idx[i]) * p.xstride[p.dim]];
  }
}
