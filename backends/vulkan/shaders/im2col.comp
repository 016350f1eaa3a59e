#version 450
// im2col for conv2d over a chunk of `nc` images starting at image n0: every element of the column buffer reads
// one input pixel (or 0 where the kernel tap falls on padding). Two layouts, both walked in memory order so the
// writes are coalesced (kk = (c_in_group * kh + i) * kw + j, p = oh * wo + ow):
//   per image (forward):  col[n][g][kk][p] -- the B operands of one GEMM per (image, group)
//   per group (backward): col[g][kk][n][p] -- one [K, nc * plane] operand per group, summing over images in K
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Col { float col[]; };
layout(push_constant) uniform P {
  uint total;  // elements of col for this chunk
  uint n0, nc;
  uint c, h, w;
  uint cg, groups;
  uint kh, kw;
  uint sh, sw;
  int ph, pw;
  uint dh, dw;
  uint ho, wo;
  uint per_group;
} p;

void main() {
  const uint plane = p.ho * p.wo, taps = p.kh * p.kw, kdim = p.cg * taps;
  FOR_EACH(e, p.total) {
    const uint q = e % plane;
    uint r = e / plane, n, kk, g;
    if (p.per_group != 0u) {
      n = r % p.nc;
      r /= p.nc;
      kk = r % kdim;
      g = r / kdim;
    } else {
      kk = r % kdim;
      r /= kdim;
      g = r % p.groups;
      n = r / p.groups;
    }
    const uint ch = g * p.cg + kk / taps, t = kk % taps;
    const int ih = int((q / p.wo) * p.sh + (t / p.kw) * p.dh) - p.ph;
    const int iw = int((q % p.wo) * p.sw + (t % p.kw) * p.dw) - p.pw;
    float v = 0.0;
    if (ih >= 0 && ih < int(p.h) && iw >= 0 && iw < int(p.w))
      v = x[((p.n0 + n) * p.c + ch) * p.h * p.w + uint(ih) * p.w + uint(iw)];
    col[e] = v;
  }
}
