#version 450
// Range check of index values, so the host can raise IndexError like the CPU (which reports the first bad index).
// FIND:   flag[0] = max over bad positions i of (n - i), i.e. n - (first bad position); 0 when all are in [0, size).
// REPORT: one invocation copies the first bad index value into flag[1] (as int64), so a single read-back of the
//         two int64 flag elements gives both the verdict and the message.
#extension GL_GOOGLE_include_directive : require
#include "int64.glsl"
#include "common.glsl"

layout(std430, binding = 0) readonly buffer I { int64_t idx[]; };
layout(std430, binding = 1) buffer F { uint flag[]; };  // two Int elements: four words (two with EMBER_NO_INT64)
layout(push_constant) uniform P { uint n; uint pad; uvec2 size_words; } p;

void main() {
#ifdef REPORT
  if (gl_GlobalInvocationID.x == 0u && flag[0] != 0u) {
#ifdef EMBER_NO_INT64
    flag[1] = uint(idx[p.n - flag[0]]);  // 32-bit Int elements: flag[1] is the second element
#else
    const uvec2 w = unpack32(uint64_t(idx[p.n - flag[0]]));
    flag[2] = w.x;
    flag[3] = w.y;
#endif
  }
#else
  FOR_EACH(i, p.n) {
    const int64_t v = idx[i];
    if (v < int64_t(0) || v >= INT_FROM_WORDS(p.size_words)) atomicMax(flag[0], p.n - i);
  }
#endif
}
