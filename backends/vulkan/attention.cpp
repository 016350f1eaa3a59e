// Flash attention on Vulkan: shaders/attention.comp's passes (forward; the backward's row deltas, dq, dk, dv).
// Extra device memory is the row logsumexp and delta, [B, H, L] each: no [L, S] matrix is ever allocated.
#include "backends/vulkan/attention.hpp"

#include "backends/vulkan/launch.hpp"

namespace ember::vk {
namespace {

EMBER_SHADER_WORDS(kAttentionForward)
#include "attention_forward.spv.inc"
;
EMBER_SHADER_DEF(kAttentionForward)
EMBER_SHADER_WORDS(kAttentionDelta)
#include "attention_delta.spv.inc"
;
EMBER_SHADER_DEF(kAttentionDelta)
EMBER_SHADER_WORDS(kAttentionBackwardQ)
#include "attention_backward_q.spv.inc"
;
EMBER_SHADER_DEF(kAttentionBackwardQ)
EMBER_SHADER_WORDS(kAttentionBackwardK)
#include "attention_backward_k.spv.inc"
;
EMBER_SHADER_DEF(kAttentionBackwardK)
EMBER_SHADER_WORDS(kAttentionBackwardV)
#include "attention_backward_v.spv.inc"
;
EMBER_SHADER_DEF(kAttentionBackwardV)

struct Push {
  uint32_t n;
  int32_t H, L, S, E, Ev;
  int32_t bias_b, bias_h, bias_l, bias_s;
  int32_t has_bias, causal;
  float scale;
};

Push push(const FloatT& q, const FloatT& k, const FloatT& v, const FloatT* bias, const SdpaOptions& o, int64_t n) {
  for (const FloatT* t : {&q, &k, &v, bias})
    if (t) check_elements(t->numel(), "scaled_dot_product_attention");
  const auto i32 = [](int64_t x) { return static_cast<int32_t>(x); };
  Push p{static_cast<uint32_t>(n), i32(q.shape[1]), i32(q.shape[2]), i32(k.shape[2]), i32(q.shape[3]),
         i32(v.shape[3]), 0, 0, 0, 0, bias ? 1 : 0, o.is_causal ? 1 : 0, static_cast<float>(o.scale)};
  if (bias) {
    const Shape& s = bias->shape;
    const int64_t st2 = s[3], st1 = s[2] * st2, st0 = s[1] * st1;
    p.bias_s = s[3] == 1 ? 0 : 1;
    p.bias_l = s[2] == 1 ? 0 : i32(st2);
    p.bias_h = s[1] == 1 ? 0 : i32(st1);
    p.bias_b = s[0] == 1 ? 0 : i32(st0);
  }
  return p;
}

}  // namespace

SdpaForward<FloatT> sdpa_forward(const FloatT& q, const FloatT& k, const FloatT& v, const FloatT* bias,
                                 const SdpaOptions& o) {
  SdpaForward<FloatT> r{empty<float>(q.ctx, Shape{q.shape[0], q.shape[1], q.shape[2], v.shape[3]}),
                        empty<float>(q.ctx, Shape{q.shape[0], q.shape[1], q.shape[2]})};
  const int64_t rows = q.shape[0] * q.shape[1] * q.shape[2];
  launch(*q.ctx, kAttentionForward, {in(q), in(k), in(v), in(bias ? *bias : q), out(r.out), out(r.lse)},
         push(q, k, v, bias, o, rows), rows);
  return r;
}

SdpaGrads<FloatT> sdpa_backward(const FloatT& q, const FloatT& k, const FloatT& v, const FloatT* bias,
                                const FloatT& out_, const FloatT& lse, const FloatT& dout, const SdpaOptions& o) {
  SdpaGrads<FloatT> g{empty<float>(q.ctx, q.shape), empty<float>(q.ctx, k.shape), empty<float>(q.ctx, v.shape),
                      std::nullopt};
  auto delta = empty<float>(q.ctx, lse.shape);
  const FloatT& b = bias ? *bias : q;
  const int64_t q_rows = q.shape[0] * q.shape[1] * q.shape[2], k_rows = k.shape[0] * k.shape[1] * k.shape[2];
  const Push qp = push(q, k, v, bias, o, q_rows), kp = push(q, k, v, bias, o, k_rows);
  launch(*q.ctx, kAttentionDelta, {in(out_), in(dout), out(delta)}, qp, q_rows);
  launch(*q.ctx, kAttentionBackwardQ, {in(q), in(k), in(v), in(b), in(lse), in(dout), in(delta), out(g.q)}, qp, q_rows);
  launch(*q.ctx, kAttentionBackwardK, {in(q), in(k), in(v), in(b), in(lse), in(dout), in(delta), out(g.k)}, kp, k_rows);
  launch(*q.ctx, kAttentionBackwardV, {in(q), in(k), in(v), in(b), in(lse), in(dout), in(delta), out(g.v)}, kp, k_rows);
  return g;
}

}  // namespace ember::vk
