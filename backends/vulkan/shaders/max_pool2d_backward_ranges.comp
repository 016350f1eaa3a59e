#version 450
// Setup for the gather-form max_pool2d backward, which only knows the argmax indices (not the window geometry).
// For every input row h it finds [first, last], the output rows oh whose argmax lies in row h for some (n, c, ow),
// and likewise for every input column; an input pixel then only scans those output rows x columns.
// BOUNDS: one workgroup per output row oh (lines [0, Ho)) and output column ow (lines [Ho, Ho + Wo)) reduces the
//         min / max input row (column) of the argmaxes on that line over every plane: bounds[2*line], [2*line+1].
// RANGES: one invocation per input row h (items [0, H)) and column w (items [H, H + W)) collects the output lines
//         whose bounds contain it: ranges[2*item] = first, [2*item+1] = last (first > last when none).
// Windows move monotonically with oh, so [first, last] lies within the rows whose windows cover h: the scan stays
// as small as the windows, whatever the stride or dilation.
#extension GL_GOOGLE_include_directive : require
#include "int64.glsl"
#include "common.glsl"

layout(std430, binding = 0) readonly buffer I { int64_t indices[]; };
layout(std430, binding = 1) buffer B { int bounds[]; };
layout(std430, binding = 2) writeonly buffer R { int ranges[]; };
layout(push_constant) uniform P { uint planes; int H, W, Ho, Wo; } p;

#ifdef BOUNDS
shared int lo_s[gl_WorkGroupSize.x];
shared int hi_s[gl_WorkGroupSize.x];

void main() {
  const uint lines = uint(p.Ho + p.Wo);
  for (uint line = gl_WorkGroupID.x; line < lines; line += gl_NumWorkGroups.x) {
    const bool is_row = line < uint(p.Ho);
    const uint across = is_row ? uint(p.Wo) : uint(p.Ho);  // positions per plane along the line
    const uint count = p.planes * across;
    int lo = 0x7fffffff, hi = -1;
    for (uint e = gl_LocalInvocationID.x; e < count; e += gl_WorkGroupSize.x) {
      const uint plane = e / across, t = e % across;
      const uint q = plane * uint(p.Ho * p.Wo) + (is_row ? line * uint(p.Wo) + t : t * uint(p.Wo) + (line - uint(p.Ho)));
      const int a = int(indices[q]);
      if (a >= 0) {
        const int c = is_row ? a / p.W : a % p.W;
        lo = min(lo, c);
        hi = max(hi, c);
      }
    }
    lo_s[gl_LocalInvocationID.x] = lo;
    hi_s[gl_LocalInvocationID.x] = hi;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1) {
      if (gl_LocalInvocationID.x < s) {
        lo_s[gl_LocalInvocationID.x] = min(lo_s[gl_LocalInvocationID.x], lo_s[gl_LocalInvocationID.x + s]);
        hi_s[gl_LocalInvocationID.x] = max(hi_s[gl_LocalInvocationID.x], hi_s[gl_LocalInvocationID.x + s]);
      }
      barrier();
    }
    if (gl_LocalInvocationID.x == 0u) {
      bounds[2u * line] = lo_s[0];
      bounds[2u * line + 1u] = hi_s[0];
    }
    barrier();  // lo_s[0] / hi_s[0] are read before the next line overwrites them
  }
}
#else
void main() {
  FOR_EACH(item, uint(p.H + p.W)) {
    const bool is_row = item < uint(p.H);
    const int c = is_row ? int(item) : int(item) - p.H;
    const int count = is_row ? p.Ho : p.Wo, base = is_row ? 0 : p.Ho;
    int first = count, last = -1;
    for (int o = 0; o < count; ++o) {
      if (bounds[2 * (base + o)] <= c && c <= bounds[2 * (base + o) + 1]) {
        first = min(first, o);
        last = o;
      }
    }
    ranges[2u * item] = first;
    ranges[2u * item + 1u] = last;
  }
}
#endif
