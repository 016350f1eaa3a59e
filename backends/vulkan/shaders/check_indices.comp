#version 450
// Range check of index values, so the host can raise IndexError like the CPU (which reports the first bad index).
// FIND:   flag[0] = max over bad positions i of (n - i), i.e. n - (first bad position); 0 when all are in [0, size).
// REPORT: one invocation copies the first bad index value into flag[1] (as int64), so a single read-back of the
//         two int64 flag elements gives both the verdict and the message.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#include "common.glsl"

layout(std430, binding = 0) readonly buffer I { int64_t idx[]; };
layout(std430, binding = 1) buffer F { uint flag[]; };  // two int64 elements = four words
layout(push_constant) uniform P { uint n; uint pad; int64_t size; } p;

void main() {
#ifdef REPORT
  if (gl_GlobalInvocationID.x == 0u && flag[0] != 0u) {
    const uvec2 w = unpack32(uint64_t(idx[p.n - flag[0]]));
    flag[2] = w.x;
    flag[3] = w.y;
  }
#else
  FOR_EACH(i, p.n) {
    const int64_t v = idx[i];
    if (v < 0l || v >= p.size) atomicMax(flag[0], p.n - i);
  }
#endif
}
