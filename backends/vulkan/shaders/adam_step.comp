#version 450
// One Adam / AdamW update in one pass (engine/optim/adam.hpp's formulas, the composed default's order of operations
// in engine/backend/optional_ops.hpp, each product and quotient rounded on its own: `precise` keeps the compiler
// from contracting them into FMAs, so the results are the composed ops' bits). Replaces ~12 dispatches per param.
//
// The per-step scalars (lr / bias corrections) come from push constants, or, inside a plan (backends/vulkan/plan.hpp),
// from a host-visible buffer of the plan's that a compiled training step rewrites before each replay
// (engine/compile/README.md): a command buffer recorded once then still follows the schedule and the step count.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "math.glsl"

layout(std430, binding = 0) readonly buffer W { float w[]; };
layout(std430, binding = 1) readonly buffer G { float g[]; };
layout(std430, binding = 2) readonly buffer M { float m[]; };
layout(std430, binding = 3) readonly buffer V { float v[]; };
layout(std430, binding = 4) writeonly buffer OW { float ow[]; };
layout(std430, binding = 5) writeonly buffer OM { float om[]; };
layout(std430, binding = 6) writeonly buffer OV { float ov[]; };
layout(std430, binding = 7) readonly buffer S { float words[]; };
// mode: 0 no weight decay, 1 L2 (Adam), 2 decoupled (AdamW); first: no moments yet (m and v are not read).
// s: decay (1 - lr * wd), wd, beta1, 1 - beta1, beta2, 1 - beta2, sqrt(bias_correction2), eps, lr / bias_correction1.
layout(push_constant) uniform P { uint n; uint mode; uint first; uint from_buffer; float s[9]; } p;

float arg(uint i) { return p.from_buffer != 0u ? words[i] : p.s[i]; }

void main() {
  const float decay = arg(0u), wd = arg(1u), b1 = arg(2u), one_b1 = arg(3u), b2 = arg(4u), one_b2 = arg(5u);
  const float sqrt_bc2 = arg(6u), eps = arg(7u), step = arg(8u);
  FOR_EACH(i, p.n) {
    precise float wi = w[i], gi = g[i];
    if (p.mode == 2u) wi = wi * decay;
    if (p.mode == 1u) {
      precise float l2 = wi * wd;
      gi = gi + l2;
    }
    precise float mi, vi;
    precise float gg = gi * gi;
    gg = gg * one_b2;
    if (p.first != 0u) {
      mi = gi * one_b1;
      vi = gg;
    } else {
      precise float ma = m[i] * b1, mb = gi * one_b1;
      mi = ma + mb;
      precise float va = v[i] * b2;
      vi = va + gg;
    }
    precise float denom = ember_sqrt(vi) / sqrt_bc2;
    denom = denom + eps;
    precise float q = mi / denom;
    q = q * step;
    om[i] = mi;
    ov[i] = vi;
    ow[i] = wi - q;
  }
}
