// conv2d_backward_im2col (onednn.hpp): the backward of a convolution with few input channels per group (an image
// model's first layer) as im2col + GEMM, split over the batch.
//
// conv.cpp runs the same math over the whole batch at once; its only parallelism is OpenBLAS's inside each GEMM
// and im2col's over channels. Here, grad_w = grad [C_out, K=N*H*W] x col^T reduces over the batch, a dimension
// OpenBLAS does not split (M = C_out and N = C_in*kh*kw are small), and 3 input channels split 2:1 over 2 threads:
// that backward ran at 0.98x of its 1-thread speed on 2 threads (bench/README.md, issue 15). Each pool thread now
// takes a slice of the batch: im2col, both GEMMs and col2im of its images, with partial sums of grad_w and grad_b
// added at the end. Inside a slice the GEMMs are oneDNN's sgemm on that thread alone (onednn_slices.hpp): OpenBLAS
// would either start its own threads inside each slice or serialize concurrent calls.
//
// With one slice (one thread, or one image) the steps, their order and OpenBLAS's GEMMs are conv.cpp's, so the
// bits are the same as that path's; with several, the batch's sums are split into per-slice partials
// (BatchPartials, onednn_slices.hpp).
#include <dnnl.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

#include "backends/cpu/allocator.hpp"
#include "backends/cpu/im2col.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/onednn.hpp"
#include "backends/cpu/onednn_slices.hpp"
#include "engine/backend/conv_geometry.hpp"

namespace ember::cpu::onednn {
namespace {

// C = op(A) op(B) (+ C when accumulate), row-major.
bool slice_gemm(bool sliced, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  if (!sliced) {
    gemm<float>(trans_a, trans_b, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
    return true;
  }
  return dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc) ==
         dnnl_success;
}

struct Scratch {
  float* col;  // [K, N_slice * H_out * W_out] per slice
  float* gg;   // grad as [C_out, N_slice * H_out * W_out] per slice
};

// The grads of one slice's images (g.n of them): its part of grad_x, and grad_w / grad_b summed over it (written).
bool backward_slice(const Conv2dGeometry& g, bool sliced, const float* x, const float* w, const float* grad,
                    float* gx, float* gw, float* gb, Scratch s) {
  const int64_t cout = g.cout, k = g.k(), l = g.l(), plane = g.ho * g.wo;
  const float* gr = grad;
  if (g.n != 1) {
    // NCHW -> [C_out, N * H_out*W_out], the layout the forward GEMM produced (with one image it already is).
    parallel_for(cout * g.n, std::max<int64_t>(1, kParallelThreshold / std::max<int64_t>(1, plane)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t r = lo; r < hi; ++r) {
                     const int64_t co = r / g.n, n = r % g.n;
                     std::memcpy(s.gg + co * l + n * plane, grad + (n * cout + co) * plane,
                                 static_cast<std::size_t>(plane) * sizeof(float));
                   }
                 });
    gr = s.gg;
  }
  im2col(x, g, 0, s.col);
  // grad_w = grad x col^T, then grad_col = w^T x grad into the column buffer, which grad_w is done with.
  if (!slice_gemm(sliced, false, true, cout, k, l, gr, l, s.col, l, gw, k)) return false;
  if (!slice_gemm(sliced, true, false, k, l, cout, w, k, gr, l, s.col, l)) return false;
  std::fill(gx, gx + g.n * g.c * g.h * g.w, 0.0f);  // col2im accumulates
  col2im(s.col, g, 0, gx);
  if (gb) {
    for (int64_t co = 0; co < cout; ++co) {
      float acc = 0.0f;
      for (int64_t n = 0; n < g.n; ++n) acc += lane_sum(grad + (n * cout + co) * plane, plane);
      gb[co] = acc;
    }
  }
  return true;
}

}  // namespace

std::optional<Conv2dGrads<CpuTensor<float>>> conv2d_backward_im2col(const CpuTensor<float>& x,
                                                                    const CpuTensor<float>& w,
                                                                    const CpuTensor<float>& grad, bool has_bias,
                                                                    const Conv2dOptions& o) {
  const Conv2dGeometry g = conv2d_geometry(x.shape, w.shape, o);
  if (g.groups != 1 || g.n <= 0 || grad.numel() == 0) return std::nullopt;  // conv.cpp's path handles them
  const int64_t k = g.k(), plane = g.ho * g.wo, in_image = g.c * g.h * g.w, out_image = g.cout * plane;
  CpuTensor<float> gx(x.shape), gw(w.shape);
  std::optional<CpuTensor<float>> gb;
  if (has_bias) gb = CpuTensor<float>(Shape{g.cout});
  const bool sliced = batch_slices(g.n) > 1;
  // Slices take disjoint ranges of one column buffer and one transposed-grad buffer, as large as conv.cpp's.
  const std::shared_ptr<Buffer> col_buf = allocate(static_cast<std::size_t>(k * g.l()) * sizeof(float));
  const std::shared_ptr<Buffer> gg_buf = allocate(static_cast<std::size_t>(g.cout * g.l()) * sizeof(float));
  BatchPartials sums(gw.data(), gw.numel(), gb ? gb->data() : nullptr, g.cout, g.n);
  std::atomic<bool> ok{true};
  over_batch(g.n, [&](int64_t lo, int64_t hi) {
    const auto [pw, pb] = sums.claim(lo);
    Conv2dGeometry gs = g;
    gs.n = hi - lo;
    const Scratch s{static_cast<float*>(col_buf->ptr) + k * plane * lo,
                    static_cast<float*>(gg_buf->ptr) + g.cout * plane * lo};
    if (!backward_slice(gs, sliced, x.data() + lo * in_image, w.data(), grad.data() + lo * out_image,
                        gx.data() + lo * in_image, pw, pb, s))
      ok = false;
  });
  if (!ok) return std::nullopt;
  sums.add();
  return Conv2dGrads<CpuTensor<float>>{std::move(gx), std::move(gw), std::move(gb)};
}

}  // namespace ember::cpu::onednn
