// Fused float kernels behind the Backend's optional ops: the backward step of common activations (one pass for
// g * f'(x) instead of 3-8 elementwise ops) and one Adam/AdamW update (instead of ~12 passes over the parameter).
// Both follow the CPU backend's formulas and operation order.
#include <cmath>

#include "backends/cuda/float_math.cuh"  // activation_grad
#include "backends/cuda/kernels.hpp"
#include "backends/cuda/runtime.cuh"

namespace ember::cuda {
namespace {

template <UnaryOp Op>
__global__ void unary_backward_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                      const float* __restrict__ g, float* __restrict__ out, int64_t n) {
  EMBER_CUDA_LOOP(i, n) out[i] = activation_grad<Op>(x[i], y[i], g[i]);
}

template <UnaryOp Op>
CudaTensor<float> launch_unary_backward(const CudaTensor<float>& x, const CudaTensor<float>& y,
                                        const CudaTensor<float>& g) {
  DeviceContext& ctx = context(g.device());
  CudaTensor<float> out(g.shape, g.device());
  const int64_t n = out.numel();
  if (n == 0) return out;
  unary_backward_kernel<Op><<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(x.data(), y.data(), g.data(), out.data(),
                                                                           n);
  check_launch("unary_backward_kernel");
  return out;
}

static_assert(sizeof(AdamConsts) == 9 * sizeof(float));

// kDecay: 0 none, 1 L2 (Adam), 2 decoupled (AdamW). kFirst: no moments yet (m = v = 0).
template <int kDecay, bool kFirst>
__global__ void adam_kernel(const float* __restrict__ pw, const float* __restrict__ pg, const float* __restrict__ pm,
                            const float* __restrict__ pv, float* __restrict__ ow, float* __restrict__ om,
                            float* __restrict__ ov, int64_t n, AdamConsts by_value, const AdamConsts* in_graph) {
  // Inside a CUDA graph the scalars change per replay: read from the graph's per-step words (graph_capture.hpp).
  const AdamConsts k = in_graph ? *in_graph : by_value;
  EMBER_CUDA_LOOP(i, n) {
    float wi = pw[i], gi = pg[i];
    if constexpr (kDecay == 2) wi = wi * k.decay;
    if constexpr (kDecay == 1) gi = gi + wi * k.wd;
    float mi, vi;
    const float gg = gi * gi * k.one_b2;
    if constexpr (kFirst) {
      mi = gi * k.one_b1;
      vi = gg;
    } else {
      mi = pm[i] * k.b1 + gi * k.one_b1;
      vi = pv[i] * k.b2 + gg;
    }
    const float denom = sqrtf(vi) / k.sqrt_bc2 + k.eps;
    om[i] = mi;
    ov[i] = vi;
    ow[i] = wi - mi / denom * k.step;
  }
}

}  // namespace

std::optional<CudaTensor<float>> unary_backward(UnaryOp op, const CudaTensor<float>& x, const CudaTensor<float>& y,
                                                const CudaTensor<float>& g) {
  switch (op) {
    case UnaryOp::Relu: return launch_unary_backward<UnaryOp::Relu>(x, y, g);
    case UnaryOp::Exp: return launch_unary_backward<UnaryOp::Exp>(x, y, g);
    case UnaryOp::Tanh: return launch_unary_backward<UnaryOp::Tanh>(x, y, g);
    case UnaryOp::Sigmoid: return launch_unary_backward<UnaryOp::Sigmoid>(x, y, g);
    case UnaryOp::Gelu: return launch_unary_backward<UnaryOp::Gelu>(x, y, g);
    case UnaryOp::GeluTanh: return launch_unary_backward<UnaryOp::GeluTanh>(x, y, g);
    default: return std::nullopt;
  }
}

AdamConsts adam_consts(const AdamStepArgs& a) {
  return {static_cast<float>(1 - a.lr * a.weight_decay), static_cast<float>(a.weight_decay),
          static_cast<float>(a.beta1), static_cast<float>(1 - a.beta1), static_cast<float>(a.beta2),
          static_cast<float>(1 - a.beta2), static_cast<float>(std::sqrt(a.bias_correction2)), static_cast<float>(a.eps),
          static_cast<float>(a.lr / a.bias_correction1)};
}

AdamStepResult<CudaTensor<float>> adam_step(const CudaTensor<float>& w, const CudaTensor<float>& g,
                                            const CudaTensor<float>* m, const CudaTensor<float>* v,
                                            const AdamStepArgs& a) {
  const int dev = w.device();
  DeviceContext& ctx = context(dev);
  AdamStepResult<CudaTensor<float>> r{CudaTensor<float>(w.shape, dev), CudaTensor<float>(w.shape, dev),
                                      CudaTensor<float>(w.shape, dev)};
  const AdamConsts k = adam_consts(a);
  // Asked for even when there is nothing to update: a graph's per-step blocks are one per Adam update.
  GraphCapture* graph = capturing(ctx);
  const AdamConsts* in_graph = graph ? static_cast<const AdamConsts*>(graph->step_words(sizeof k)) : nullptr;
  const int64_t n = w.numel();
  if (n == 0) return r;
  const int mode = a.weight_decay == 0 ? 0 : (a.decoupled ? 2 : 1);
  const bool first = m == nullptr || v == nullptr;
  const float* pm = first ? nullptr : m->data();
  const float* pv = first ? nullptr : v->data();
  const unsigned grid = grid_for(n, ctx);
  auto run = [&](auto kernel) {
    kernel<<<grid, kThreads, 0, ctx.stream>>>(w.data(), g.data(), pm, pv, r.param.data(), r.exp_avg.data(),
                                              r.exp_avg_sq.data(), n, k, in_graph);
  };
  if (first) {
    if (mode == 0) run(adam_kernel<0, true>);
    else if (mode == 1) run(adam_kernel<1, true>);
    else run(adam_kernel<2, true>);
  } else {
    if (mode == 0) run(adam_kernel<0, false>);
    else if (mode == 1) run(adam_kernel<1, false>);
    else run(adam_kernel<2, false>);
  }
  check_launch("adam_kernel");
  return r;
}

}  // namespace ember::cuda
