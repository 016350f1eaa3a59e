#version 450
// y[i] = f16(x[i]): the f16 copy of a weight a plan makes once when it is built, read by the GEMM's B16 variant
// (gemm.comp). Needs only storageBuffer16BitAccess: the 16-bit type is stored, never computed with.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float16_t y[]; };
layout(push_constant) uniform P { uint n; } p;

void main() {
  FOR_EACH(i, p.n) y[i] = float16_t(x[i]);
}
