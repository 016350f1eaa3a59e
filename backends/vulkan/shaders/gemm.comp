#version 450
// Tiled GEMM: C = alpha * op(A) @ op(B) + beta * C, f32 with f32 accumulation, batched over gl_WorkGroupID.z.
//
// A workgroup of 256 invocations (a 16x16 grid) computes a BM x BN = 16R x 16R tile of C; each invocation holds an
// R x R register micro-tile made of R/4 x R/4 blocks of 4x4, spread 64 rows/columns apart, so its operands come
// out of shared memory as vec4 loads (rows 4*(ty + 16h) .. +3 of A, columns 4*(tx + 16h) .. +3 of B) and its C
// stores are 4 consecutive floats, 16 invocations covering 64 consecutive columns.
//
// K is walked in slabs of BK: the next slab's global loads are issued into registers before the current slab is
// multiplied out of shared memory (one shared buffer, latency hidden by the register prefetch). Global loads are
// coalesced along whichever dim is contiguous in memory for the operand's transpose flag; out-of-range elements
// (M, N, K not multiples of the tile) load as 0, so the inner loop needs no bounds checks.
//
// Specialization constants: 0 = workgroup size (must be 256), 1 = R (4 or 8), 2 = BK, 3 = flags (bit 0: A is
// stored transposed [K, M]; bit 1: B is stored transposed [N, K]).
// Shared memory: 2 * BK * (BM + 4) floats (BK = 8, R = 8: 8.3 KiB; BK = 16, R = 4: 8.5 KiB).
//
// HALF (devices with shaderFloat16, when the context enables f16 variants): the slabs are held in shared memory as
// f16 (half the shared memory and its bandwidth) and each product is an f16 multiply, accumulated in f32. Inputs
// are rounded to f16 (relative error 2^-11 each, range +-65504) and so is each product: results carry about three
// significant digits, so this variant is opt-in (ContextOptions::shader_float16, adopt option shader_float16).
//
// B16 / A16 (devices with storageBuffer16BitAccess, when the context enables f16 storage): B (or A) is read from an
// f16 buffer, a plan's f16 copy of a weight made when the plan was built (plan.hpp): half the bytes each replay
// reads. Elements widen to f32 on load, so the only difference from the f32 GEMM is that operand's rounding to f16.
// Linear layers' weights are B (x @ W), conv2d's are A (W @ im2col columns).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require  // [[unroll]]: keep the register tile in registers
#if defined(A16) || defined(B16)
#extension GL_EXT_shader_16bit_storage : require
#endif
#ifdef HALF
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define SLAB_VEC f16vec4
#define SLAB_SCALAR float16_t
#else
#define SLAB_VEC vec4
#define SLAB_SCALAR float
#endif
#include "common.glsl"

layout(constant_id = 1) const uint R = 8;
layout(constant_id = 2) const uint BK = 8;
layout(constant_id = 3) const uint FLAGS = 0;

const uint THREADS = 256;
const uint BM = 16 * R;  // tile rows = tile columns
const uint RV = R / 4;   // vec4 blocks per micro-tile side
const bool TRANS_A = (FLAGS & 1u) != 0u;
const bool TRANS_B = (FLAGS & 2u) != 0u;
const uint LOADS = (BM * BK) / THREADS;  // elements of each operand one invocation moves per slab

#ifdef A16
layout(std430, binding = 0) readonly buffer A { float16_t a[]; };
#define A_LOAD(i) float(a[i])
#else
layout(std430, binding = 0) readonly buffer A { float a[]; };
#define A_LOAD(i) a[i]
#endif
#ifdef B16
layout(std430, binding = 1) readonly buffer B { float16_t b[]; };
#define B_LOAD(i) float(b[i])
#else
layout(std430, binding = 1) readonly buffer B { float b[]; };
#define B_LOAD(i) b[i]
#endif
layout(std430, binding = 2) buffer C { float c[]; };

layout(push_constant) uniform P {
  uint m, n, k;
  uint lda, ldb, ldc;
  uint a_off, b_off, c_off;
  float alpha, beta;
  uint batch_inner;  // z = outer * batch_inner + inner
  uint a_stride[2], b_stride[2], c_stride[2];  // per batch level: outer, inner (0 = broadcast)
} p;

// Row-major [k][m] (A) and [k][n] (B) slabs as vec4s; one padding vec4 per row spreads the transposing stores
// of a non-transposed A (or a transposed B) over all banks.
shared SLAB_VEC As[BK][BM / 4 + 1];
shared SLAB_VEC Bs[BK][BM / 4 + 1];

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint tx = tid % 16, ty = tid / 16;
  const uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BM;
  const uint outer = gl_WorkGroupID.z / p.batch_inner, inner = gl_WorkGroupID.z % p.batch_inner;
  const uint a_base = p.a_off + outer * p.a_stride[0] + inner * p.a_stride[1];
  const uint b_base = p.b_off + outer * p.b_stride[0] + inner * p.b_stride[1];
  const uint c_base = p.c_off + outer * p.c_stride[0] + inner * p.c_stride[1];

  // Slab coordinates of the elements this invocation loads: the contiguous dim varies fastest across invocations.
  uint a_m[LOADS], a_k[LOADS], b_n[LOADS], b_k[LOADS];
  [[unroll]] for (uint l = 0; l < LOADS; ++l) {
    const uint e = tid + l * THREADS;
    a_m[l] = TRANS_A ? e % BM : e / BK;
    a_k[l] = TRANS_A ? e / BM : e % BK;
    b_n[l] = TRANS_B ? e / BK : e % BM;
    b_k[l] = TRANS_B ? e % BK : e / BM;
  }

  float a_next[LOADS], b_next[LOADS];
  // Loads slab k0 of both operands into a_next / b_next (0 outside the matrices).
#define LOAD_SLAB(k0)                                                                                      \
  [[unroll]] for (uint l = 0; l < LOADS; ++l) {                                                            \
    const uint gm = row0 + a_m[l], gk = (k0) + a_k[l];                                                     \
    a_next[l] = (gm < p.m && gk < p.k) ? A_LOAD(a_base + (TRANS_A ? gk * p.lda + gm : gm * p.lda + gk)) : 0.0; \
    const uint gn = col0 + b_n[l], hk = (k0) + b_k[l];                                                     \
    b_next[l] = (gn < p.n && hk < p.k) ? B_LOAD(b_base + (TRANS_B ? gn * p.ldb + hk : hk * p.ldb + gn)) : 0.0; \
  }

  vec4 acc[R][RV];
  [[unroll]] for (uint i = 0; i < R; ++i)
    [[unroll]] for (uint j = 0; j < RV; ++j) acc[i][j] = vec4(0.0);

  LOAD_SLAB(0u)
  for (uint k0 = 0; k0 < p.k; k0 += BK) {
    [[unroll]] for (uint l = 0; l < LOADS; ++l) {
      As[a_k[l]][a_m[l] / 4][a_m[l] % 4] = SLAB_SCALAR(a_next[l]);
      Bs[b_k[l]][b_n[l] / 4][b_n[l] % 4] = SLAB_SCALAR(b_next[l]);
    }
    barrier();
    if (k0 + BK < p.k) {
      LOAD_SLAB(k0 + BK)
    }
    [[unroll]] for (uint kk = 0; kk < BK; ++kk) {
      SLAB_VEC av[RV], bv[RV];
      [[unroll]] for (uint h = 0; h < RV; ++h) {
        av[h] = As[kk][ty + 16 * h];
        bv[h] = Bs[kk][tx + 16 * h];
      }
      [[unroll]] for (uint hi = 0; hi < RV; ++hi)
        [[unroll]] for (uint i = 0; i < 4; ++i)
          [[unroll]] for (uint hj = 0; hj < RV; ++hj)
#ifdef HALF
            acc[hi * 4 + i][hj] += vec4(av[hi][i] * bv[hj]);  // f16 products, f32 sums
#else
            acc[hi * 4 + i][hj] = fma(vec4(av[hi][i]), bv[hj], acc[hi * 4 + i][hj]);
#endif
    }
    barrier();  // everyone is done reading the slab before it is overwritten
  }

  const bool read_c = p.beta != 0.0;  // beta 0 must not read C (it may be uninitialized, even NaN)
  [[unroll]] for (uint hi = 0; hi < RV; ++hi) {
    [[unroll]] for (uint i = 0; i < 4; ++i) {
      const uint row = row0 + 4 * (ty + 16 * hi) + i;
      if (row >= p.m) continue;
      [[unroll]] for (uint hj = 0; hj < RV; ++hj) {
        const uint col = col0 + 4 * (tx + 16 * hj);
        [[unroll]] for (uint j = 0; j < 4; ++j) {
          if (col + j >= p.n) break;
          const uint idx = c_base + row * p.ldc + col + j;
          const float v = p.alpha * acc[hi * 4 + i][hj][j];
          c[idx] = read_c ? v + p.beta * c[idx] : v;
        }
      }
    }
  }
}
