#version 450
// GEMM for few rows: C = alpha * op(A) @ op(B) + beta * C with M <= 8 (a small batch through a linear layer, the
// backward's input gradient at that batch), batched over gl_WorkGroupID.z like gemm.comp. gemm.comp's smallest tile
// is 64 x 64: at M = 4 it multiplies 60 rows of zeros. Here a workgroup of 64 invocations computes RM rows x 64
// columns, one column per invocation, RM accumulators each.
//
// K is walked in slabs of BK: the slab of A (RM x BK) and of B (BK x 64) are staged in shared memory with loads
// coalesced along whichever dim is contiguous for the operand's transpose flag, out-of-range elements as 0. Each
// accumulator takes one fma per k in ascending k from 0, the rows and columns past M, N and the k past K adding
// fma(0, 0, acc), exactly as in gemm.comp with the same BK: both shaders produce the same bits.
//
// Specialization constants: 0 = workgroup size (must be 64), 1 = RM (1, 2, 4 or 8), 2 = BK (4, 8 or 16: gemm.comp's
// for the same product), 3 = flags (bit 0: A stored transposed [K, M]; bit 1: B stored transposed [N, K]).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(constant_id = 1) const uint RM = 8;
layout(constant_id = 2) const uint BK = 16;
layout(constant_id = 3) const uint FLAGS = 0;

const uint BN = 64;  // columns per workgroup: one per invocation
const bool TRANS_A = (FLAGS & 1u) != 0u;
const bool TRANS_B = (FLAGS & 2u) != 0u;

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) buffer C { float c[]; };

layout(push_constant) uniform P {
  uint m, n, k;
  uint lda, ldb, ldc;
  uint a_off, b_off, c_off;
  float alpha, beta;
  uint batch_inner;  // z = outer * batch_inner + inner
  uint a_stride[2], b_stride[2], c_stride[2];  // per batch level: outer, inner (0 = broadcast)
} p;

shared float As[BK][RM];
shared float Bs[BK][BN + 1];  // one padding column: a transposed B's stores spread over the banks

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint row0 = gl_WorkGroupID.y * RM, col0 = gl_WorkGroupID.x * BN;
  const uint outer = gl_WorkGroupID.z / p.batch_inner, inner = gl_WorkGroupID.z % p.batch_inner;
  const uint a_base = p.a_off + outer * p.a_stride[0] + inner * p.a_stride[1];
  const uint b_base = p.b_off + outer * p.b_stride[0] + inner * p.b_stride[1];
  const uint c_base = p.c_off + outer * p.c_stride[0] + inner * p.c_stride[1];

  float acc[RM];
  [[unroll]] for (uint i = 0; i < RM; ++i) acc[i] = 0.0;

  for (uint k0 = 0; k0 < p.k; k0 += BK) {
    // A's slab: RM * BK <= 128 elements, up to 2 per invocation; the contiguous dim varies fastest.
    for (uint e = tid; e < RM * BK; e += BN) {
      const uint am = TRANS_A ? e % RM : e / BK, ak = TRANS_A ? e / RM : e % BK;
      const uint gm = row0 + am, gk = k0 + ak;
      As[ak][am] = (gm < p.m && gk < p.k) ? a[a_base + (TRANS_A ? gk * p.lda + gm : gm * p.lda + gk)] : 0.0;
    }
    // B's slab: BK * 64 elements, BK per invocation.
    for (uint l = 0; l < BK; ++l) {
      const uint e = tid + l * BN;
      const uint bn = TRANS_B ? e / BK : e % BN, bk = TRANS_B ? e % BK : e / BN;
      const uint gn = col0 + bn, gk = k0 + bk;
      Bs[bk][bn] = (gn < p.n && gk < p.k) ? b[b_base + (TRANS_B ? gn * p.ldb + gk : gk * p.ldb + gn)] : 0.0;
    }
    barrier();
    for (uint kk = 0; kk < BK; ++kk) {  // rolled: only the accumulators must stay in registers
      const float bv = Bs[kk][tid];
      [[unroll]] for (uint i = 0; i < RM; ++i) acc[i] = fma(As[kk][i], bv, acc[i]);
    }
    barrier();  // everyone is done reading the slab before it is overwritten
  }

  const uint col = col0 + tid;
  if (col >= p.n) return;
  const bool read_c = p.beta != 0.0;  // beta 0 must not read C (it may be uninitialized, even NaN)
  [[unroll]] for (uint i = 0; i < RM; ++i) {
    const uint row = row0 + i;
    if (row >= p.m) break;
    const uint idx = c_base + row * p.ldc + col;
    const float v = p.alpha * acc[i];
    c[idx] = read_c ? v + p.beta * c[idx] : v;
  }
}
