#version 450
// conv2d bias, NCHW with `plane` = H_out * W_out:
//   FILL: out[n][co][q] = bias[co] (the forward GEMM then accumulates onto it with beta = 1)
//   GRAD: gb[co] = sum over n, q of grad[n][co][q]; one workgroup per channel (grid-stride over channels),
//         a strided partial sum per invocation, then a shared-memory tree.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Src { float src[]; };
layout(std430, binding = 1) writeonly buffer Dst { float dst[]; };
layout(push_constant) uniform P {
  uint n;     // images
  uint cout;
  uint plane;
} p;

#ifdef FILL
void main() {
  FOR_EACH(e, p.n * p.cout * p.plane) dst[e] = src[(e / p.plane) % p.cout];
}
#endif

#ifdef GRAD
shared float partial[gl_WorkGroupSize.x];

void main() {
  const uint tid = gl_LocalInvocationIndex, per_channel = p.n * p.plane;
  for (uint co = gl_WorkGroupID.x; co < p.cout; co += gl_NumWorkGroups.x) {
    float s = 0.0;
    for (uint e = tid; e < per_channel; e += gl_WorkGroupSize.x)
      s += src[((e / p.plane) * p.cout + co) * p.plane + e % p.plane];
    partial[tid] = s;
    barrier();
    for (uint half_ = gl_WorkGroupSize.x / 2; half_ > 0; half_ /= 2) {
      if (tid < half_) partial[tid] += partial[tid + half_];
      barrier();
    }
    if (tid == 0) dst[co] = partial[0];
    barrier();  // partial[0] is read before the next channel overwrites it
  }
}
#endif
