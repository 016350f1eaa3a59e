#version 450
// Flash attention (backends/vulkan/attention.cpp), one invocation per row, no [L, S] score matrix:
//   FORWARD      per query row: keys streamed in tiles of TILE with an online softmax (running max m, denominator
//                l, the output row as accumulator rescaled by exp(m_old - m_new)); writes the row logsumexp
//                (+inf for a fully masked row, whose output is 0).
//   DELTA        per query row: delta = rowsum(dout * out).
//   BACKWARD_Q   per query row: dq = scale * sum_j p_ij (dp_ij - delta_i) k_j, with p_ij = exp(s_ij - lse_i) and
//                dp_ij = dout_i . v_j recomputed.
//   BACKWARD_K   per key row: dk = scale * sum_i p_ij (dp_ij - delta_i) q_i.
//   BACKWARD_V   per key row: dv = sum_i p_ij dout_i.
// dk and dv are separate passes because a pipeline has 8 bindings (pipelines.hpp). Each output row is written by
// one invocation only: no atomics, deterministic. The bias is read through strides that are 0 along its
// broadcast dims; without a bias q is bound in its place and has_bias is 0.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#if defined(DELTA)
layout(std430, binding = 0) readonly buffer O { float o[]; };
layout(std430, binding = 1) readonly buffer DO { float dout[]; };
layout(std430, binding = 2) writeonly buffer Delta { float delta[]; };
#else
layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
#endif
#if defined(FORWARD)
layout(std430, binding = 4) buffer O { float o[]; };
layout(std430, binding = 5) writeonly buffer Lse { float lse[]; };
#elif !defined(DELTA)
layout(std430, binding = 4) readonly buffer Lse { float lse[]; };
layout(std430, binding = 5) readonly buffer DO { float dout[]; };
layout(std430, binding = 6) readonly buffer Delta { float delta[]; };
layout(std430, binding = 7) writeonly buffer Grad { float grad[]; };
#endif

// n rows; sizes; the bias's strides over (b, h, l, s); flags; the score scale.
layout(push_constant) uniform P {
  uint n;
  int H, L, S, E, Ev;
  int bias_b, bias_h, bias_l, bias_s;
  int has_bias, causal;
  float scale;
} p;

#define TILE 32
// Infinities by bit pattern (GLSL has no literal; a global const must be a constant expression).
#define kNegInf uintBitsToFloat(0xff800000u)
#define kPosInf uintBitsToFloat(0x7f800000u)

#if !defined(DELTA)
// scale * q_i . k_j + bias(b, h, i, j); the caller applies the causal mask. bh = b * H + h.
float score(uint bh, int i, int j) {
  const uint qb = (bh * uint(p.L) + uint(i)) * uint(p.E), kb = (bh * uint(p.S) + uint(j)) * uint(p.E);
  float d = 0.0;
  for (int e = 0; e < p.E; ++e) d += q[qb + uint(e)] * k[kb + uint(e)];
  d *= p.scale;
  if (p.has_bias != 0) {
    const int b = int(bh) / p.H, h = int(bh) % p.H;
    d += bias[uint(b * p.bias_b + h * p.bias_h + i * p.bias_l + j * p.bias_s)];
  }
  return d;
}

#endif

#if !defined(FORWARD) && !defined(DELTA)
// dout_i . v_j
float dp_of(uint bh, int i, int j) {
  const uint ob = (bh * uint(p.L) + uint(i)) * uint(p.Ev), vb = (bh * uint(p.S) + uint(j)) * uint(p.Ev);
  float d = 0.0;
  for (int x = 0; x < p.Ev; ++x) d += dout[ob + uint(x)] * v[vb + uint(x)];
  return d;
}
#endif

void main() {
  FOR_EACH(r, p.n) {
#if defined(FORWARD) || defined(BACKWARD_Q)
    const uint bh = r / uint(p.L);
    const int i = int(r % uint(p.L));
    const int s_end = p.causal != 0 ? min(p.S, i + 1) : p.S;
#endif
#if defined(FORWARD)
    const uint ob = r * uint(p.Ev), vb = bh * uint(p.S * p.Ev);
    for (int x = 0; x < p.Ev; ++x) o[ob + uint(x)] = 0.0;
    float m = kNegInf, l = 0.0;
    float s[TILE];
    for (int j0 = 0; j0 < s_end; j0 += TILE) {
      const int nb = min(TILE, s_end - j0);
      float mx = kNegInf;
      for (int jj = 0; jj < nb; ++jj) {
        s[jj] = score(bh, i, j0 + jj);
        mx = max(mx, s[jj]);
      }
      const float m_new = max(m, mx);
      if (m_new == kNegInf) continue;  // every key so far masked
      const float alpha = exp(m - m_new);
      float sum = 0.0;
      for (int jj = 0; jj < nb; ++jj) {
        s[jj] = exp(s[jj] - m_new);
        sum += s[jj];
      }
      l = l * alpha + sum;
      m = m_new;
      for (int x = 0; x < p.Ev; ++x) {
        float a = o[ob + uint(x)] * alpha;
        for (int jj = 0; jj < nb; ++jj) a += s[jj] * v[vb + uint((j0 + jj) * p.Ev + x)];
        o[ob + uint(x)] = a;
      }
    }
    const float inv = l == 0.0 ? 0.0 : 1.0 / l;
    for (int x = 0; x < p.Ev; ++x) o[ob + uint(x)] *= inv;
    lse[r] = l == 0.0 ? kPosInf : m + log(l);
#elif defined(DELTA)
    float d = 0.0;
    for (int x = 0; x < p.Ev; ++x) d += dout[r * uint(p.Ev) + uint(x)] * o[r * uint(p.Ev) + uint(x)];
    delta[r] = d;
#elif defined(BACKWARD_Q)
    const uint qb = r * uint(p.E), kb = bh * uint(p.S * p.E);
    // Accumulated in place: this invocation is the row's only writer.
    for (int e = 0; e < p.E; ++e) grad[qb + uint(e)] = 0.0;
    const float li = lse[r], d = delta[r];
    for (int j = 0; j < s_end; ++j) {
      const float pr = exp(score(bh, i, j) - li);  // 0 for masked keys and fully masked rows
      if (pr == 0.0) continue;
      const float ds = pr * (dp_of(bh, i, j) - d) * p.scale;
      for (int e = 0; e < p.E; ++e) grad[qb + uint(e)] += ds * k[kb + uint(j * p.E + e)];
    }
#else
    const uint bh = r / uint(p.S);
    const int j = int(r % uint(p.S));
#if defined(BACKWARD_K)
    const uint gb = r * uint(p.E), qb = bh * uint(p.L * p.E);
    for (int e = 0; e < p.E; ++e) grad[gb + uint(e)] = 0.0;
#else
    const uint gb = r * uint(p.Ev), ob = bh * uint(p.L * p.Ev);
    for (int x = 0; x < p.Ev; ++x) grad[gb + uint(x)] = 0.0;
#endif
    for (int i = p.causal != 0 ? j : 0; i < p.L; ++i) {
      const uint row = bh * uint(p.L) + uint(i);
      const float pr = exp(score(bh, i, j) - lse[row]);
      if (pr == 0.0) continue;
#if defined(BACKWARD_K)
      const float ds = pr * (dp_of(bh, i, j) - delta[row]) * p.scale;
      for (int e = 0; e < p.E; ++e) grad[gb + uint(e)] += ds * q[qb + uint(i * p.E + e)];
#else
      for (int x = 0; x < p.Ev; ++x) grad[gb + uint(x)] += pr * dout[ob + uint(i * p.Ev + x)];
#endif
    }
#endif
  }
}
