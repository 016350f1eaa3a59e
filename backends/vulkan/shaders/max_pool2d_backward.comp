#version 450
// max_pool2d backward in gather form: one invocation per input pixel sums the gradients of the outputs whose
// argmax it is, scanning only the output rows x columns that max_pool2d_backward_ranges.comp found for its row
// and column. Outputs are visited in row-major order, the CPU's accumulation order, and nothing is written by two
// invocations (no atomics).
#extension GL_GOOGLE_include_directive : require
#include "int64.glsl"
#include "common.glsl"

layout(std430, binding = 0) readonly buffer G { float g[]; };
layout(std430, binding = 1) readonly buffer I { int64_t indices[]; };
layout(std430, binding = 2) readonly buffer R { int ranges[]; };
layout(std430, binding = 3) writeonly buffer GX { float gx[]; };
layout(push_constant) uniform P { uint n; int H, W, Ho, Wo; } p;

void main() {
  FOR_EACH(i, p.n) {
    const uint plane = i / uint(p.H * p.W);
    const int at = int(i % uint(p.H * p.W));
    const int h = at / p.W, w = at % p.W;
    const int r0 = ranges[2 * h], r1 = ranges[2 * h + 1];
    const int c0 = ranges[2 * (p.H + w)], c1 = ranges[2 * (p.H + w) + 1];
    const uint out_base = plane * uint(p.Ho * p.Wo);
    float s = 0.0;
    for (int oh = r0; oh <= r1; ++oh) {
      for (int ow = c0; ow <= c1; ++ow) {
        const uint q = out_base + uint(oh * p.Wo + ow);
        if (int(indices[q]) == at) s += g[q];
      }
    }
    gx[i] = s;
  }
}
