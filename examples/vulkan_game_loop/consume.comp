#version 450
// The "game's" own compute pass: it consumes Ember's output (logits [frames_batch, 10]) straight from Ember's
// buffer and writes a per-row decision into the game's buffer: the index of the largest logit and its softmax
// probability. This is what a game would do with a policy network's output, without a host round trip.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Logits { float logits[]; };
layout(std430, binding = 1) writeonly buffer Decisions { vec2 decisions[]; };
layout(push_constant) uniform P { uint rows; uint classes; } p;

void main() {
  const uint r = gl_GlobalInvocationID.x;
  if (r >= p.rows) return;
  uint best = 0u;
  float top = logits[r * p.classes];
  for (uint c = 1u; c < p.classes; ++c) {
    const float v = logits[r * p.classes + c];
    if (v > top) { top = v; best = c; }
  }
  float z = 0.0;
  for (uint c = 0u; c < p.classes; ++c) z += exp(logits[r * p.classes + c] - top);
  decisions[r] = vec2(float(best), 1.0 / z);
}
