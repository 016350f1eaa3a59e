// The fused Adam / AdamW update (shaders/adam_step.comp): one dispatch reading w, g, m, v and writing the three
// new tensors, instead of the composed default's ~12 elementwise dispatches per param.
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "backends/vulkan/context.hpp"
#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"
#include "engine/tensor/error.hpp"

namespace ember::vk {
namespace {

EMBER_SHADER_WORDS(kAdamStep)
#include "adam_step.spv.inc"
;
EMBER_SHADER_DEF(kAdamStep)

struct AdamPush {
  uint32_t n, mode, first, from_buffer;
  float s[9];
};

}  // namespace

std::array<float, 9> adam_words(const AdamStepArgs& a) {
  // The composed default's scalar operands, rounded to float as vk::scalar rounds them.
  return {static_cast<float>(1 - a.lr * a.weight_decay), static_cast<float>(a.weight_decay),
          static_cast<float>(a.beta1),                   static_cast<float>(1 - a.beta1),
          static_cast<float>(a.beta2),                   static_cast<float>(1 - a.beta2),
          static_cast<float>(std::sqrt(a.bias_correction2)), static_cast<float>(a.eps),
          static_cast<float>(a.lr / a.bias_correction1)};
}

AdamStepResult<FloatT> adam_step(const FloatT& w, const FloatT& g, const FloatT* m, const FloatT* v,
                                 const AdamStepArgs& a) {
  const bool first = m == nullptr || v == nullptr;
  if (g.shape.num_elements() != w.shape.num_elements() ||
      (!first && (m->numel() != w.numel() || v->numel() != w.numel())))
    throw ShapeError(fmt::format("vulkan adam_step: param {} with gradient {} and moments of other sizes",
                                 w.shape.to_string(), g.shape.to_string()));
  check_elements(w.numel(), "adam_step");
  AdamStepResult<FloatT> r{empty<float>(w.ctx, w.shape), empty<float>(w.ctx, w.shape), empty<float>(w.ctx, w.shape)};
  AdamPush p{static_cast<uint32_t>(w.numel()), a.weight_decay == 0 ? 0u : (a.decoupled ? 2u : 1u), first ? 1u : 0u,
             0u, {}};
  const std::array<float, 9> words = adam_words(a);
  std::memcpy(p.s, words.data(), sizeof p.s);
  Context& ctx = *w.ctx;
  // Inside a plan the scalars go to a buffer the plan owns, so a replay can follow the lr schedule and the step count.
  const auto scalars = replay_words(ctx, words.data(), static_cast<uint32_t>(sizeof(float) * words.size()),
                                    "Adam's per-step scalars in a buffer the replay rewrites");
  p.from_buffer = scalars ? 1u : 0u;
  // The first step reads no moments: w stands in for them (read-only, never indexed by the shader).
  const BufferArg mb = first ? in(w) : in(*m), vb = first ? in(w) : in(*v);
  const uint64_t n = static_cast<uint64_t>(w.numel());
  if (scalars)
    launch(ctx, kAdamStep, {in(w), in(g), mb, vb, out(r.param), out(r.exp_avg), out(r.exp_avg_sq), {scalars, false}},
           p, n);
  else  // binding 7 gets the stream's dummy, unread
    launch(ctx, kAdamStep, {in(w), in(g), mb, vb, out(r.param), out(r.exp_avg), out(r.exp_avg_sq)}, p, n);
  return r;
}

}  // namespace ember::vk
