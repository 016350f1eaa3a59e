#version 450
// col2im in gather form (the adjoint of im2col.comp's per-group layout) for a chunk of `nc` images starting at
// n0: each input pixel sums the column entries of every kernel tap that read it, so every output element is
// written by exactly one invocation (no atomics, deterministic order: taps i, then j).
//   gx[n0 + n][ch][ih][iw] = sum over (i, j) with oh = (ih + ph - i*dh) / sh, ow = (iw + pw - j*dw) / sw exact and
//   in range of gcol[g][(ch % cg * kh + i) * kw + j][n][oh * wo + ow]
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(std430, binding = 0) readonly buffer GCol { float gcol[]; };
layout(std430, binding = 1) buffer GX { float gx[]; };
layout(push_constant) uniform P {
  uint total;  // elements of gx for this chunk: nc * c * h * w
  uint n0, nc;
  uint c, h, w;
  uint cg;
  uint kh, kw;
  uint sh, sw;
  int ph, pw;
  uint dh, dw;
  uint ho, wo;
} p;

void main() {
  const uint plane = p.ho * p.wo, kdim = p.cg * p.kh * p.kw;
  FOR_EACH(e, p.total) {
    const int iw = int(e % p.w);
    uint r = e / p.w;
    const int ih = int(r % p.h);
    r /= p.h;
    const uint ch = r % p.c, n = r / p.c;
    const uint g = ch / p.cg, cl = ch % p.cg;
    float sum = 0.0;
    for (uint i = 0; i < p.kh; ++i) {
      const int th = ih + p.ph - int(i * p.dh);
      if (th < 0 || th % int(p.sh) != 0) continue;
      const uint oh = uint(th) / p.sh;
      if (oh >= p.ho) continue;
      for (uint j = 0; j < p.kw; ++j) {
        const int tw = iw + p.pw - int(j * p.dw);
        if (tw < 0 || tw % int(p.sw) != 0) continue;
        const uint ow = uint(tw) / p.sw;
        if (ow >= p.wo) continue;
        const uint kk = (cl * p.kh + i) * p.kw + j;
        sum += gcol[((g * kdim + kk) * p.nc + n) * plane + oh * p.wo + ow];
      }
    }
    gx[p.n0 * p.c * p.h * p.w + e] = sum;
  }
}
