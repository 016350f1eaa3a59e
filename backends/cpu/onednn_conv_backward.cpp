// oneDNN convolution backwards (onednn.hpp): grad input, grad weight and grad bias, on one thread per batch slice or,
// on two threads or more, the two passes side by side. Plans: onednn_conv_plan.hpp.
#include <dnnl.hpp>

#include <algorithm>
#include <atomic>
#include <optional>
#include <unordered_map>

#include "backends/cpu/onednn.hpp"
#include "backends/cpu/onednn_conv_plan.hpp"
#include "backends/cpu/onednn_slices.hpp"
#include "backends/cpu/parallel.hpp"
#include "engine/backend/conv_geometry.hpp"

namespace ember::cpu::onednn {
namespace detail {
namespace {

// grad weight (and bias) = correlation of x with grad, written to gw (gb) on s, not waited for; dd_w: grad in the
// layout the backward-weights primitive reads.
void run_weights_backward(Plan& p, const float* x, const memory& dd_w, float* gw, float* gb, dnnl::stream& s) {
  BackwardReorders& r = p.bwd_reorders;
  const memory src = read_through(r.x_in, wrap(p.x, x), s);
  memory ugw = wrap(p.w, gw);
  const memory dwei = written_to(r.gw_out, ugw);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, dd_w}, {DNNL_ARG_DIFF_WEIGHTS, dwei}};
  if (gb) args.emplace(DNNL_ARG_DIFF_BIAS, wrap(p.b, gb));
  p.bwd_weights.execute(s, args);
  write_back(r.gw_out, ugw, s);
}

// One batch slice's grad input alone (conv2d_backward's passes side by side).
bool data_backward_slice(const Conv2dGeometry& g, const Conv2dOptions& o, const float* w, const float* grad,
                         float* gx, bool has_bias) {
  Plan* p = plan(g, o, has_bias, true, PostOp::None);
  if (!p) return false;
  BackwardReorders& r = p->bwd_reorders;
  dnnl::stream& s = thread_stream();
  const memory dd = read_through(r.grad_in, wrap(p->y, grad), s);
  const memory wei = read_through(r.w_in, wrap(p->w, w), s);
  memory ugx = wrap(p->x, gx);
  const memory dsrc = written_to(r.gx_out, ugx);
  p->bwd_data.execute(s, {{DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DIFF_SRC, dsrc}});
  write_back(r.gx_out, ugx, s);
  s.wait();
  return true;
}

// One batch slice's backward: grad input of the slice's images, and the slice's share of grad weight / bias
// (written, not accumulated: the caller sums the slices). Every reorder and blocked buffer is the plan's
// (BackwardReorders), and the stream the thread's.
bool backward_slice(const Conv2dGeometry& g, const Conv2dOptions& o, const float* x, const float* w,
                    const float* grad, float* gx, float* gw, float* gb) {
  Plan* p = plan(g, o, gb != nullptr, true, PostOp::None);
  if (!p) return false;
  BackwardReorders& r = p->bwd_reorders;
  dnnl::stream& s = thread_stream();
  const memory ugrad = wrap(p->y, grad);
  // grad input = conv_transpose(grad, w).
  const memory dd = read_through(r.grad_in, ugrad, s);
  const memory wei = read_through(r.w_in, wrap(p->w, w), s);
  memory ugx = wrap(p->x, gx);
  const memory dsrc = written_to(r.gx_out, ugx);
  p->bwd_data.execute(s, {{DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DIFF_SRC, dsrc}});
  write_back(r.gx_out, ugx, s);
  run_weights_backward(*p, x, r.grad_in_w.prim ? read_through(r.grad_in_w, ugrad, s) : dd, gw, gb, s);
  s.wait();
  return true;
}

}  // namespace
}  // namespace detail

using namespace detail;

bool weights_backward_slice(const Conv2dGeometry& g, const Conv2dOptions& o, const float* x, const float* grad,
                            float* gw, float* gb) {
  Plan* p = plan(g, o, gb != nullptr, true, PostOp::None);
  if (!p) return false;
  BackwardReorders& r = p->bwd_reorders;
  dnnl::stream& s = thread_stream();
  run_weights_backward(*p, x, read_through(r.grad_in_w.prim ? r.grad_in_w : r.grad_in, wrap(p->y, grad), s), gw, gb,
                       s);
  s.wait();
  return true;
}

std::optional<Conv2dGrads<CpuTensor<float>>> conv2d_backward(const CpuTensor<float>& x, const CpuTensor<float>& w,
                                                             const CpuTensor<float>& grad, bool has_bias,
                                                             const Conv2dOptions& o) {
  const Conv2dGeometry g = conv2d_geometry(x.shape, w.shape, o);
  // With few input channels per group (an image's first layer: 1 or 3) oneDNN's backward kernels work on plain
  // layouts and took 1.5x the time of im2col + GEMM (3->32 @32x32, batch 32: 4.5 ms against 3.0 ms); its
  // forward stays faster there. Its backward-weights kernel alone would save ~17% of that backward, but its sums
  // over N*H*W are ~5x less accurate than the GEMM's (1x8x8 -> 8 channels, batch 64: 1.8e-6 against 3.2e-7 of
  // the largest grad weight) and, amplified by Adam, moved the residual CNN's PyTorch-parity loss curve by
  // 1.3e-4 after three epochs (bindings/python/tests/test_residual_cnn_parity.py, bar 1e-4).
  if (!usable(g)) return std::nullopt;
  if (g.cg < kMinBackwardChannels) return conv2d_backward_im2col(x, w, grad, has_bias, o);
  CpuTensor<float> gx(x.shape), gw(w.shape);
  std::optional<CpuTensor<float>> gb;
  if (has_bias) gb = CpuTensor<float>(Shape{g.cout});
  const int64_t in_image = g.c * g.h * g.w, out_image = g.cout * g.ho * g.wo, wn = gw.numel();
  std::atomic<bool> ok{true};
  const int64_t threads = num_threads();
  if (threads >= 2) {
    // The two passes side by side: grad input on (threads + 1) / 2 batch slices, grad weight / bias on threads / 2,
    // each task on one thread. Each slice of a pass pays the pass's fixed cost once (Winograd's weight transform,
    // the weight reorders: a 16-image slice of 64->128 @8 took 0.70 ms of bwd data against 1.07 for 32 images),
    // so two threads each running both passes on half the batch scaled 1.5x; one pass per thread over the whole
    // batch pays it once per pass. Through Ember's pool, so a descheduled worker's task is run by the caller.
    const int64_t data_slices = std::min(g.n, (threads + 1) / 2), weight_slices = std::min(g.n, threads / 2);
    BatchPartials sums(gw.data(), wn, gb ? gb->data() : nullptr, g.cout, g.n, weight_slices);
    parallel_for(data_slices + weight_slices, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        on_one_omp_thread([&] {
          if (i < data_slices) {
            const auto [lo, hi] = slice_bounds(g.n, data_slices, i);
            if (!data_backward_slice(slice(g, lo, hi), o, w.data(), grad.data() + lo * out_image,
                                     gx.data() + lo * in_image, has_bias))
              ok = false;
          } else {
            const auto [lo, hi] = slice_bounds(g.n, weight_slices, i - data_slices);
            const auto [pw, pb] = sums.claim(lo);
            if (!weights_backward_slice(slice(g, lo, hi), o, x.data() + lo * in_image,
                                        grad.data() + lo * out_image, pw, pb))
              ok = false;
          }
        });
      }
    });
    if (!ok) return std::nullopt;
    sums.add();
    return Conv2dGrads<CpuTensor<float>>{std::move(gx), std::move(gw), std::move(gb)};
  }
  BatchPartials sums(gw.data(), wn, gb ? gb->data() : nullptr, g.cout, g.n);
  over_batch(g.n, [&](int64_t lo, int64_t hi) {
    const auto [pw, pb] = sums.claim(lo);
    if (!backward_slice(slice(g, lo, hi), o, x.data() + lo * in_image, w.data(), grad.data() + lo * out_image,
                        gx.data() + lo * in_image, pw, pb))
      ok = false;
  });
  if (!ok) return std::nullopt;
  sums.add();
  return Conv2dGrads<CpuTensor<float>>{std::move(gx), std::move(gw), std::move(gb)};
}

}  // namespace ember::cpu::onednn
