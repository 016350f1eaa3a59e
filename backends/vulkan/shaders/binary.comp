#version 450
// out[i] = a[ia] (op) b[ib] with NumPy broadcasting: the output is contiguous, a and b are read through strides
// (0 along broadcast dims) over up to 8 merged dims. Variants: TYPE_F32 / TYPE_I64 arithmetic (BinaryOp codes),
// COMPARE (CompareOp codes, output Bool words), LOGIC (LogicOp codes on Bool words).
#extension GL_GOOGLE_include_directive : require
#if defined(TYPE_I64)
#include "int64.glsl"
#define T int64_t
#elif defined(TYPE_U32)
#define T uint
#else
#define T float
#endif
#if defined(COMPARE) || defined(LOGIC)
#define OUT uint
#else
#define OUT T
#endif
#include "common.glsl"
#include "op_codes.glsl"
// The op code is a specialization constant: each op gets its own pipeline with the switch folded away, instead of
// every element branching on a push constant (costly on SIMD-emulating devices such as lavapipe).
layout(constant_id = 1) const uint OP = 0u;
#include "math.glsl"
#include "math_trig.glsl"
#include "int_math.glsl"

layout(std430, binding = 0) readonly buffer A { T a[]; };
layout(std430, binding = 1) readonly buffer B { T b[]; };
layout(std430, binding = 2) writeonly buffer Y { OUT y[]; };
layout(push_constant) uniform P {
  uint n;
  uint rank;
  uint op;
  uint pad;
  uint shape[MAX_DIMS];
  uint astride[MAX_DIMS];
  uint bstride[MAX_DIMS];
} p;

#if defined(COMPARE)
OUT apply(T x, T z) {
  switch (OP) {
    case COMPARE_EQ: return uint(x == z);
    case COMPARE_NE: return uint(x != z);
    case COMPARE_LT: return uint(x < z);
    case COMPARE_LE: return uint(x <= z);
    case COMPARE_GT: return uint(x > z);
    case COMPARE_GE: return uint(x >= z);
  }
  return 0u;
}
#elif defined(LOGIC)
OUT apply(T x, T z) {
  switch (OP) {
    case LOGIC_AND: return x & z;
    case LOGIC_OR: return x | z;
    case LOGIC_XOR: return x ^ z;
  }
  return 0u;
}
#elif defined(TYPE_I64)
OUT apply(T x, T z) {
  switch (OP) {
    case BINARY_ADD: return x + z;
    case BINARY_SUB: return x - z;
    case BINARY_MUL: return x * z;
    case BINARY_DIV: return int_div(x, z);
    case BINARY_POW: return int_pow(x, z);
    case BINARY_MAXIMUM: return x > z ? x : z;
    case BINARY_MINIMUM: return x < z ? x : z;
    case BINARY_REMAINDER: return int_remainder(x, z);
  }
  return x;
}
#else
#include "float_ops.glsl"
OUT apply(T x, T z) { return binary_f32(OP, x, z); }
#endif

void main() {
  if (p.rank <= 1u) {
    // Same-shape operands (or a scalar against a vector) merge to one dim: no index arithmetic. Integer division
    // is slow on GPUs and scalarized on CPU devices, and this is the common case.
    const uint sa = p.rank == 1u ? p.astride[0] : 0u;
    const uint sb = p.rank == 1u ? p.bstride[0] : 0u;
    FOR_EACH(i, p.n) y[i] = apply(a[i * sa], b[i * sb]);
    return;
  }
  FOR_EACH(i, p.n) {
    uint rest = i, ia = 0u, ib = 0u;
    for (int d = int(p.rank) - 1; d >= 0; --d) {
      const uint idx = rest % p.shape[d];
      rest /= p.shape[d];
      ia += idx * p.astride[d];
      ib += idx * p.bstride[d];
    }
    y[i] = apply(a[ia], b[ib]);
  }
}
