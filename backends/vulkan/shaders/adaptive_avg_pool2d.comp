#version 450
// adaptive_avg_pool2d with the CPU's windows [floor(i * in / out), ceil((i + 1) * in / out)).
// Forward: one invocation per output element averages its window in row-major order.
// BACKWARD (gather form): one invocation per input pixel sums grad / window size over the windows covering it, in
// the CPU's row-major output order; each pixel is written once, so no atomics.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "pool.glsl"

#ifdef BACKWARD
layout(std430, binding = 0) readonly buffer G { float g[]; };
layout(std430, binding = 1) writeonly buffer GX { float gx[]; };
#else
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
#endif
layout(push_constant) uniform P { uint n; int H, W, Ho, Wo; } p;

// Outputs along one axis whose window covers input position c: end(o) > c from o = floor(c * out / in), and
// start(o) <= c up to o = ceil((c + 1) * out / in) - 1.
ivec2 covering(int c, int in_size, int out_size) {
  return ivec2((c * out_size) / in_size, min(((c + 1) * out_size + in_size - 1) / in_size - 1, out_size - 1));
}

void main() {
#ifdef BACKWARD
  FOR_EACH(i, p.n) {
    const uint plane = i / uint(p.H * p.W);
    const int at = int(i % uint(p.H * p.W));
    const int h = at / p.W, w = at % p.W;
    const ivec2 rows = covering(h, p.H, p.Ho), cols = covering(w, p.W, p.Wo);
    const uint out_base = plane * uint(p.Ho * p.Wo);
    float s = 0.0;
    for (int oh = rows.x; oh <= rows.y; ++oh) {
      const int h0 = adaptive_start(oh, p.H, p.Ho), h1 = adaptive_end(oh, p.H, p.Ho);
      if (h < h0 || h >= h1) continue;
      for (int ow = cols.x; ow <= cols.y; ++ow) {
        const int w0 = adaptive_start(ow, p.W, p.Wo), w1 = adaptive_end(ow, p.W, p.Wo);
        if (w < w0 || w >= w1) continue;
        s += g[out_base + uint(oh * p.Wo + ow)] / float((h1 - h0) * (w1 - w0));
      }
    }
    gx[i] = s;
  }
#else
  FOR_EACH(i, p.n) {
    const uint plane = i / uint(p.Ho * p.Wo);
    const int q = int(i % uint(p.Ho * p.Wo));
    const int oh = q / p.Wo, ow = q % p.Wo;
    const int h0 = adaptive_start(oh, p.H, p.Ho), h1 = adaptive_end(oh, p.H, p.Ho);
    const int w0 = adaptive_start(ow, p.W, p.Wo), w1 = adaptive_end(ow, p.W, p.Wo);
    const uint src = plane * uint(p.H * p.W);
    float s = 0.0;
    for (int h = h0; h < h1; ++h)
      for (int w = w0; w < w1; ++w) s += x[src + uint(h * p.W + w)];
    y[i] = s / float((h1 - h0) * (w1 - w0));
  }
#endif
}
