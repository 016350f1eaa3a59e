#version 450
// max_pool2d: one invocation per output element. Padding is -inf; like the CPU (and PyTorch) the first in-image
// tap is the answer if nothing beats -inf, a NaN wins (and the last NaN's position is kept), and ties keep the
// first maximum in row-major tap order. indices = flat position in the input's H*W plane, -1 for an all-padding
// window.
#extension GL_GOOGLE_include_directive : require
#include "int64.glsl"
#include "common.glsl"
#include "math.glsl"
#include "pool.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(std430, binding = 2) writeonly buffer I { int64_t indices[]; };
layout(push_constant) uniform P {
  uint n;
  int H, W, Ho, Wo;
  int kh, kw, sh, sw, ph, pw, dh, dw;
} p;

void main() {
  FOR_EACH(i, p.n) {
    const uint plane = i / uint(p.Ho * p.Wo);
    const int q = int(i % uint(p.Ho * p.Wo));
    const int h0 = (q / p.Wo) * p.sh - p.ph, w0 = (q % p.Wo) * p.sw - p.pw;
    const ivec2 th = pool_taps(h0, p.H, p.kh, p.dh), tw = pool_taps(w0, p.W, p.kw, p.dw);
    const uint src = plane * uint(p.H * p.W);
    float best = -F_INF;
    int arg = (th.x == th.y || tw.x == tw.y) ? -1 : (h0 + th.x * p.dh) * p.W + (w0 + tw.x * p.dw);
    for (int a = th.x; a < th.y; ++a) {
      const int row = (h0 + a * p.dh) * p.W;
      for (int b = tw.x; b < tw.y; ++b) {
        const int at = row + w0 + b * p.dw;
        const float v = x[src + uint(at)];
        if (v > best || isnan(v)) {
          best = v;
          arg = at;
        }
      }
    }
    y[i] = best;
    indices[i] = int64_t(arg);
  }
}
