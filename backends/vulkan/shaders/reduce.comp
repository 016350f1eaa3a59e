#version 450
// Reduction over the middle dim of a contiguous [outer, r, inner] view, for one chunk of r per split:
// y[o, s, j] = reduce(x[o, s*chunk .. min(r, (s+1)*chunk), j]). The host (reduce.cpp) chains passes: a pass with
// splits > 1 leaves [outer, splits, inner] partials that the next pass reduces, so a long r is worked on by many
// workgroups and float sums stay pairwise-accurate.
//
// Workgroup layout (spec constants): TX lanes along inner (adjacent j: coalesced reads), TY lanes along r (each
// accumulates rows ty, ty+TY, ... of its chunk serially, then a shared-memory tree combines the TY partials), and
// TZ = WG / (TX*TY) independent tiles side by side, so short rows still fill the workgroup. TX and TY are powers
// of two.
//
// Variants: TYPE_F32 / TYPE_I64; ARG (argmax/argmin: values and first-occurrence indices travel together, NaN is
// the extreme; with HAS_INDEX (flag) the values come with the indices an earlier pass found).
#extension GL_GOOGLE_include_directive : require
#include "int64.glsl"
#if defined(TYPE_I64)
#define T int64_t
#else
#define T float
#endif
#include "int_math.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TX = 1;
layout(constant_id = 2) const uint TY = 256;

#include "op_codes.glsl"  // REDUCE_* / ARG_REDUCE_* codes of ReduceOp / ArgReduceOp

#define FLAG_HAS_INDEX 1u
#define NO_INDEX 0xFFFFFFFFu  // an empty lane: loses every comparison (largest index, identity value)

layout(std430, binding = 0) readonly buffer X { T x[]; };
layout(std430, binding = 1) writeonly buffer Y { T y[]; };
#if defined(ARG)
layout(std430, binding = 2) writeonly buffer YI { int64_t yi[]; };
layout(std430, binding = 3) readonly buffer XI { int64_t xi[]; };
#endif
layout(push_constant) uniform P {
  uint outer;
  uint r;
  uint inner;
  uint splits;
  uint chunk;     // rows of r per split
  uint op;
  uint mean_div;  // REDUCE_MEAN divides the final sum by this (the original length of the reduced dim)
  uint flags;
} p;

shared T vals[gl_WorkGroupSize.x];
#if defined(ARG)
shared uint idxs[gl_WorkGroupSize.x];
#endif

#if defined(TYPE_I64)
const T kLowest = INT64_MIN_VALUE;
const T kHighest = INT64_MAX_VALUE;
bool is_nan(T v) { return false; }
#else
#define kLowest uintBitsToFloat(0xFF800000u)   // -inf
#define kHighest uintBitsToFloat(0x7F800000u)  // +inf
bool is_nan(T v) { return isnan(v); }
#endif

#if defined(ARG)
T identity() { return p.op == ARG_REDUCE_ARGMAX ? kLowest : kHighest; }

// Whether (vb, ib) beats (va, ia): NaN beats any number (the first NaN wins), then the larger (argmax) or smaller
// (argmin) value, then on ties the smaller index, which is the first occurrence. Empty lanes carry NO_INDEX and
// the identity value, so they lose to anything real.
bool beats(T vb, uint ib, T va, uint ia) {
  const bool na = is_nan(va), nb = is_nan(vb);
  if (na != nb) return nb;
  if (!na && vb != va) return p.op == ARG_REDUCE_ARGMAX ? vb > va : vb < va;
  return ib < ia;
}
#else
T identity() {
  switch (p.op) {
    case REDUCE_PROD: return T(1);
    case REDUCE_MAX: return kLowest;
    case REDUCE_MIN: return kHighest;
  }
  return T(0);
}

// NaN is sticky for max/min (like the CPU's max_of/min_of and torch.max).
T combine(T a, T b) {
  switch (p.op) {
    case REDUCE_PROD: return a * b;
    case REDUCE_MAX: return (is_nan(a) || a > b) ? a : b;
    case REDUCE_MIN: return (is_nan(a) || a < b) ? a : b;
  }
  return a + b;
}

T finish(T acc) {
  if (p.op != REDUCE_MEAN) return acc;
#if defined(TYPE_I64)
  return int_div(acc, int64_t(p.mean_div));  // truncates toward zero; the mean of nothing is 0 like the CPU
#else
  return p.mean_div == 0u ? uintBitsToFloat(0x7FC00000u) : acc / float(p.mean_div);  // mean of nothing: NaN
#endif
}
#endif

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint TZ = gl_WorkGroupSize.x / (TX * TY);
  const uint tx = lid % TX, ty = (lid / TX) % TY, tz = lid / (TX * TY);
  const uint xblocks = (p.inner + TX - 1u) / TX;
  const uint ntiles = p.outer * p.splits * xblocks;
  // Workgroup-uniform loop (barriers inside): each workgroup takes TZ tiles at a time.
  for (uint base = gl_WorkGroupID.x * TZ; base < ntiles; base += gl_NumWorkGroups.x * TZ) {
    const uint tile = base + tz;
    const uint xb = tile % xblocks, os = tile / xblocks;
    const uint s = os % p.splits, o = os / p.splits;
    const uint j = xb * TX + tx;
    const bool in_bounds = tile < ntiles && j < p.inner;
    const uint r0 = s * p.chunk, r1 = min(p.r, r0 + p.chunk);
    const uint at = o * p.r * p.inner + j;

    T acc = identity();
#if defined(ARG)
    uint ai = NO_INDEX;
    if (in_bounds) {
      for (uint k = r0 + ty; k < r1; k += TY) {
        const uint pos = at + k * p.inner;
        const T v = x[pos];
        const uint i = (p.flags & FLAG_HAS_INDEX) != 0u ? uint(xi[pos]) : k;
        if (beats(v, i, acc, ai)) {
          acc = v;
          ai = i;
        }
      }
    }
    idxs[lid] = ai;
#else
    if (in_bounds)
      for (uint k = r0 + ty; k < r1; k += TY) acc = combine(acc, x[at + k * p.inner]);
#endif
    vals[lid] = acc;
    barrier();

    // Tree over the TY partials of each (tz, tx) column: pairwise, so float sums lose ~log2(TY) roundings.
    for (uint stride = TY / 2u; stride > 0u; stride >>= 1u) {
      if (ty < stride) {
        const uint other = lid + stride * TX;
#if defined(ARG)
        if (beats(vals[other], idxs[other], vals[lid], idxs[lid])) {
          vals[lid] = vals[other];
          idxs[lid] = idxs[other];
        }
#else
        vals[lid] = combine(vals[lid], vals[other]);
#endif
      }
      barrier();
    }

    if (ty == 0u && in_bounds) {
      const uint dst = (o * p.splits + s) * p.inner + j;
#if defined(ARG)
      y[dst] = vals[lid];
      yi[dst] = int64_t(idxs[lid]);
#else
      y[dst] = finish(vals[lid]);
#endif
    }
    barrier();  // the next tile overwrites vals
  }
}
