#version 450
// argsort along the middle dim of a contiguous [outer, len, inner] view: one workgroup sorts one line (the len
// elements x[o, :, j]) and writes the indices in sorted order. The order is total, so the result is unique and
// equals the CPU's stable sort: NaN is the largest value (after every number ascending, before them descending),
// ties (and NaNs among themselves) keep their original order.
//
// The network is a bitonic sort over len rounded up to a power of two, in the form whose every compare-exchange
// puts the smaller element at the lower position (each stage starts by comparing i with its mirror in the block):
// the padding then acts as elements larger than any, which never move, so pairs reaching past len are skipped
// and the padding needs no storage. Lines up to SHARED_N elements sort in shared memory; the GLOBAL variant sorts
// longer lines in a scratch buffer (one region per line, barriers between steps since one workgroup owns it).
#extension GL_GOOGLE_include_directive : require
#include "int64.glsl"

layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer YI { int64_t yi[]; };
#if defined(GLOBAL)
layout(std430, binding = 2) coherent buffer SK { float keys[]; };
layout(std430, binding = 3) coherent buffer SI { uint idx[]; };
#define KEY(i) keys[base + (i)]
#define IDX(i) idx[base + (i)]
#define SYNC() memoryBarrierBuffer(); barrier()
#else
#define SHARED_N 1024u
shared float keys[SHARED_N];
shared uint idx[SHARED_N];
#define KEY(i) keys[i]
#define IDX(i) idx[i]
#define SYNC() barrier()
#endif

layout(push_constant) uniform P {
  uint outer;
  uint len;
  uint inner;
  uint npad;  // len rounded up to a power of two
  uint descending;
} p;

// NaN is larger than every number; two NaNs are equivalent.
bool less(float a, float b) { return !isnan(a) && (isnan(b) || a < b); }

// Whether element (ka, ia) comes before (kb, ib) in the output: the sort order, then the original position.
bool before(float ka, uint ia, float kb, uint ib) {
  const bool ab = p.descending != 0u ? less(kb, ka) : less(ka, kb);
  const bool ba = p.descending != 0u ? less(ka, kb) : less(kb, ka);
  return ab || (!ba && ia < ib);
}

void compare_exchange(uint base, uint a, uint b) {
  if (b >= p.len) return;  // b is padding: larger than anything, already in place
  const float ka = KEY(a), kb = KEY(b);
  const uint ia = IDX(a), ib = IDX(b);
  if (before(kb, ib, ka, ia)) {
    KEY(a) = kb;
    KEY(b) = ka;
    IDX(a) = ib;
    IDX(b) = ia;
  }
}

void main() {
  const uint lid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  const uint lines = p.outer * p.inner;
  const uint half_n = p.npad / 2u;
  // Workgroup-uniform loop (barriers inside): each workgroup takes one line at a time.
  for (uint line = gl_WorkGroupID.x; line < lines; line += gl_NumWorkGroups.x) {
    const uint o = line / p.inner, j = line % p.inner;
    const uint at = o * p.len * p.inner + j;
#if defined(GLOBAL)
    const uint base = line * p.len;
#else
    const uint base = 0u;
#endif
    for (uint r = lid; r < p.len; r += wg) {
      KEY(r) = x[at + r * p.inner];
      IDX(r) = r;
    }
    SYNC();
    for (uint k = 2u; k <= p.npad; k <<= 1u) {
      const uint hk = k / 2u;
      for (uint t = lid; t < half_n; t += wg) {
        const uint block = t / hk, off = t % hk;
        compare_exchange(base, block * k + off, block * k + k - 1u - off);
      }
      SYNC();
      for (uint s = hk / 2u; s >= 1u; s >>= 1u) {
        for (uint t = lid; t < half_n; t += wg) {
          const uint a = (t / s) * 2u * s + t % s;
          compare_exchange(base, a, a + s);
        }
        SYNC();
      }
    }
    for (uint r = lid; r < p.len; r += wg) yi[at + r * p.inner] = int64_t(IDX(r));
    SYNC();  // the next line reuses the shared arrays
  }
}
