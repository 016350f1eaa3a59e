#version 450
// The one layout kernel: out[out_off + sum(idx_d * ostride_d)] = in[in_off + sum(idx_d * istride_d)] over a shape
// of up to 8 merged dims. permute, expand, slice, flip (negative strides), cat and slice_assign are all this copy
// with different strides and offsets (layout.cpp). Elements are moved as raw words: WORD64 (int64) or 32-bit
// (float, Bool words), so no arithmetic type capability is needed.
#extension GL_GOOGLE_include_directive : require
#ifdef WORD64
#define W uvec2
#else
#define W uint
#endif
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { W x[]; };
layout(std430, binding = 1) buffer Y { W y[]; };
layout(push_constant) uniform P {
  uint n;
  uint rank;
  int in_off;
  int out_off;
  uint shape[MAX_DIMS];
  int istride[MAX_DIMS];
  int ostride[MAX_DIMS];
} p;

void main() {
  FOR_EACH(i, p.n) {
    uint rest = i;
    int src = p.in_off, dst = p.out_off;
    for (int d = int(p.rank) - 1; d >= 0; --d) {
      const int idx = int(rest % p.shape[d]);
      rest /= p.shape[d];
      src += idx * p.istride[d];
      dst += idx * p.ostride[d];
    }
    y[dst] = x[src];
  }
}
