#version 450
// avg_pool2d (count_include_pad or not, zero padding never summed), same windows and divisors as the CPU.
// Forward: one invocation per output element sums its window in row-major order.
// BACKWARD (gather form): one invocation per input pixel sums grad / divisor over the windows covering it, in the
// CPU's row-major output order; each pixel is written once, so no atomics.
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
layout(push_constant) uniform P {
  uint n;
  int H, W, Ho, Wo;
  int kh, kw, sh, sw, ph, pw;
  uint count_include_pad;
} p;

float divisor(AvgSpan a, AvgSpan b) {
  return float(p.count_include_pad != 0u ? a.padded * b.padded : (a.hi - a.lo) * (b.hi - b.lo));
}

// Output positions along one axis whose window may cover input position c: o * s - pad <= c < o * s - pad + k.
ivec2 covering(int c, int k, int s, int pad, int out_size) {
  const int lo = c + pad - k < 0 ? 0 : (c + pad - k) / s + 1;
  return ivec2(lo, min((c + pad) / s, out_size - 1));
}

void main() {
#ifdef BACKWARD
  FOR_EACH(i, p.n) {
    const uint plane = i / uint(p.H * p.W);
    const int at = int(i % uint(p.H * p.W));
    const int h = at / p.W, w = at % p.W;
    const ivec2 rows = covering(h, p.kh, p.sh, p.ph, p.Ho), cols = covering(w, p.kw, p.sw, p.pw, p.Wo);
    const uint out_base = plane * uint(p.Ho * p.Wo);
    float s = 0.0;
    for (int oh = rows.x; oh <= rows.y; ++oh) {
      const AvgSpan a = avg_span(oh, p.H, p.kh, p.sh, p.ph);
      if (h < a.lo || h >= a.hi) continue;
      for (int ow = cols.x; ow <= cols.y; ++ow) {
        const AvgSpan b = avg_span(ow, p.W, p.kw, p.sw, p.pw);
        if (w < b.lo || w >= b.hi) continue;
        s += g[out_base + uint(oh * p.Wo + ow)] / divisor(a, b);
      }
    }
    gx[i] = s;
  }
#else
  FOR_EACH(i, p.n) {
    const uint plane = i / uint(p.Ho * p.Wo);
    const int q = int(i % uint(p.Ho * p.Wo));
    const AvgSpan a = avg_span(q / p.Wo, p.H, p.kh, p.sh, p.ph), b = avg_span(q % p.Wo, p.W, p.kw, p.sw, p.pw);
    const uint src = plane * uint(p.H * p.W);
    float s = 0.0;
    for (int h = a.lo; h < a.hi; ++h)
      for (int w = b.lo; w < b.hi; ++w) s += x[src + uint(h * p.W + w)];
    y[i] = s / divisor(a, b);
  }
#endif
}
