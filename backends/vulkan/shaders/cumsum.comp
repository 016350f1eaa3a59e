#version 450
// Running sum along the middle dim of a contiguous [outer, len, inner] view: one workgroup scans one line
// (x[o, :, j]) in chunks of the workgroup size, each chunk an inclusive Hillis-Steele scan in shared memory plus
// the carry of the chunks before it.
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

layout(push_constant) uniform P {
  uint outer;
  uint len;
  uint inner;
} p;

shared float part[gl_WorkGroupSize.x];

void main() {
  const uint lid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  const uint lines = p.outer * p.inner;
  for (uint line = gl_WorkGroupID.x; line < lines; line += gl_NumWorkGroups.x) {
    const uint o = line / p.inner, j = line % p.inner;
    const uint at = o * p.len * p.inner + j;
    float carry = 0.0;
    for (uint c = 0u; c < p.len; c += wg) {
      const uint r = c + lid;
      part[lid] = r < p.len ? x[at + r * p.inner] : 0.0;
      barrier();
      for (uint s = 1u; s < wg; s <<= 1u) {
        const float add = lid >= s ? part[lid - s] : 0.0;
        barrier();
        part[lid] += add;
        barrier();
      }
      if (r < p.len) y[at + r * p.inner] = carry + part[lid];
      carry += part[wg - 1u];
      barrier();  // every lane has read part[wg - 1] before the next chunk overwrites it
    }
  }
}
