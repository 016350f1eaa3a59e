#version 450
// A Bernoulli tensor (dropout's mask) from its counter-based words: y[i] = hit where word i of the Philox4x32-10
// stream keyed by p.key is below p.threshold, else 0 (engine/tensor/philox.hpp and random.hpp's fill_bernoulli, whose
// values these are bit for bit: integer arithmetic only). One invocation per block of four words; the mask is made
// on the device instead of drawn on the host and uploaded. Inside a plan the key comes from a host-visible block of
// the plan's (key_from_buffer), which a compiled step's replay rewrites with the next key of ember's generator, so a
// replayed dropout draws the mask an eager step would (backends/vulkan/compiled_step_plan.cpp).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(std430, binding = 0) writeonly buffer Y { float y[]; };
layout(std430, binding = 1) readonly buffer K { uint key_words[]; };
// threshold is ceil(prob * 2^32) below 2^32; all_hit says it is 2^32 (every word hits).
layout(push_constant) uniform P { uint n; uint threshold; uint all_hit; float hit; uvec2 key; uint key_from_buffer; } p;

// Random123's philox4x32_R(10, ctr, key).
uvec4 philox(uvec4 c, uvec2 k) {
  for (int r = 0; r < 10; ++r) {
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, c.x, hi0, lo0);
    umulExtended(0xCD9E8D57u, c.z, hi1, lo1);
    c = uvec4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    k += uvec2(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}

void main() {
  const uint blocks = (p.n + 3u) / 4u;
  const uvec2 key = p.key_from_buffer != 0u ? uvec2(key_words[0], key_words[1]) : p.key;
  // Block b's counter is {b, 0, 0, 0}: n < 2^31 elements (launch.hpp) keeps the 64-bit block index's high word 0.
  FOR_EACH(b, blocks) {
    const uvec4 w = philox(uvec4(b, 0u, 0u, 0u), key);
    for (uint j = 0u; j < 4u; ++j) {
      const uint i = 4u * b + j;
      if (i < p.n) y[i] = (p.all_hit != 0u || w[j] < p.threshold) ? p.hit : 0.0;
    }
  }
}
