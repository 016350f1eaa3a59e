// conv2d_backward_im2col (onednn.hpp): the backward of a convolution with few input channels per group (an image
// model's first layer), split over the batch into one slice per pool thread (onednn_slices.hpp).
//
// oneDNN's backward-data kernel is slow with so few input channels (2.6 ms at 3->32 @32, batch 32, one core), so
// grad_x is im2col's adjoint: col = w^T x grad, then col2im. How a slice runs depends on its column buffer
// ([k, N*H_out*W_out]):
// - up to kWholeSliceColumnBytes (a digits CNN's stem): im2col + two GEMMs over the whole slice, grad first
//   transposed into [C_out, N*H_out*W_out]; with one slice these are conv.cpp's steps and bits.
// - larger (3->32 @32, batch 32: 3.5 MiB): grad_x one image at a time, its grad already [C_out, H_out*W_out] and its
//   columns (~110 KiB) in L2, and grad_w / grad_b from oneDNN's backward-weights kernel over the slice (0.5 ms for the
//   whole batch; the same product as GEMMs per image took 0.54 ms through OpenBLAS but 2.8 through oneDNN's sgemm,
//   which the slices must use). The 3->32 step went from ~4.4 to ~2.6 ms on one core (bench/README.md, "Winograd
//   convolutions, the first layer per image, huge pages"). Chunks of 2-8 images, which need the transposed grad,
//   ran 3.9 ms.
//
// Inside a slice the GEMMs are oneDNN's sgemm on that thread alone (OpenBLAS would either start its own threads
// inside each slice or serialize concurrent calls), and the slices' partial grad_w / grad_b are added in batch order
// (BatchPartials): the same bits on every run.
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

struct Scratch {
  float* col;  // [K, N * H_out * W_out] (whole slice) or [K, H_out * W_out] (per image)
  float* gg;   // grad as [C_out, N * H_out * W_out] (whole slice)
};

// The largest column buffer of a slice run whole: while the columns and the transposed grad stay in L2 between
// im2col, the two GEMMs and col2im, two GEMMs over the slice beat a pair per image.
constexpr int64_t kWholeSliceColumnBytes = 512 << 10;

bool whole_slice(const Conv2dGeometry& g) {
  return g.k() * g.n * g.ho * g.wo * static_cast<int64_t>(sizeof(float)) <= kWholeSliceColumnBytes;
}

// C = op(A) op(B), row-major.
bool slice_gemm(bool sliced, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  if (!sliced) {
    gemm<float>(trans_a, trans_b, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
    return true;
  }
  return dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc) ==
         dnnl_success;
}

// A slice's images (g.n of them) at once: their part of grad_x, and grad_w / grad_b summed over them (written).
bool backward_whole(const Conv2dGeometry& g, bool sliced, const float* x, const float* w, const float* grad,
                    float* gx, float* gw, float* gb, Scratch s) {
  const int64_t cout = g.cout, k = g.k(), l = g.l(), plane = g.ho * g.wo;
  const float* gr = grad;
  if (g.n != 1) {
    // NCHW -> [C_out, N * H_out*W_out], the layout the forward GEMM produced (with one image it already is).
    for (int64_t co = 0; co < cout; ++co)
      for (int64_t n = 0; n < g.n; ++n)
        std::memcpy(s.gg + co * l + n * plane, grad + (n * cout + co) * plane,
                    static_cast<std::size_t>(plane) * sizeof(float));
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

// The same, grad_x one image at a time and grad_w / grad_b by oneDNN's backward-weights kernel.
bool backward_per_image(const Conv2dGeometry& g, const Conv2dOptions& o, bool sliced, const float* x,
                        const float* w, const float* grad, float* gx, float* gw, float* gb, Scratch s) {
  if (!weights_backward_slice(g, o, x, grad, gw, gb)) return false;
  const int64_t cout = g.cout, k = g.k(), plane = g.ho * g.wo, in_image = g.c * g.h * g.w;
  Conv2dGeometry one = g;
  one.n = 1;
  std::fill(gx, gx + g.n * in_image, 0.0f);  // col2im accumulates
  for (int64_t n = 0; n < g.n; ++n) {
    if (!slice_gemm(sliced, true, false, k, plane, cout, w, k, grad + n * cout * plane, plane, s.col, plane))
      return false;
    col2im(s.col, one, 0, gx + n * in_image);
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
  const int64_t slices = batch_slices(g.n);
  const bool sliced = slices > 1;
  // Every slice runs whole or every slice per image (the largest decides), so the buffers fit either.
  Conv2dGeometry largest = g;
  largest.n = (g.n + slices - 1) / slices;
  const bool whole = whole_slice(largest);
  const int64_t col_floats = k * (whole ? largest.n : 1) * plane, gg_floats = whole ? g.cout * largest.n * plane : 0;
  const std::shared_ptr<Buffer> buf =
      allocate(static_cast<std::size_t>(slices * (col_floats + gg_floats)) * sizeof(float));
  BatchPartials sums(gw.data(), gw.numel(), gb ? gb->data() : nullptr, g.cout, g.n);
  std::atomic<bool> ok{true};
  std::atomic<int64_t> next_buffer{0};
  over_batch(g.n, [&](int64_t lo, int64_t hi) {
    const auto [pw, pb] = sums.claim(lo);
    Conv2dGeometry gs = g;
    gs.n = hi - lo;
    float* mine = static_cast<float*>(buf->ptr) + next_buffer.fetch_add(1) * (col_floats + gg_floats);
    const Scratch sc{mine, mine + col_floats};
    const float *xs = x.data() + lo * in_image, *grads = grad.data() + lo * out_image;
    float* gxs = gx.data() + lo * in_image;
    if (!(whole ? backward_whole(gs, sliced, xs, w.data(), grads, gxs, pw, pb, sc)
                : backward_per_image(gs, o, sliced, xs, w.data(), grads, gxs, pw, pb, sc)))
      ok = false;
  });
  if (!ok) return std::nullopt;
  sums.add();
  return Conv2dGrads<CpuTensor<float>>{std::move(gx), std::move(gw), std::move(gb)};
}

}  // namespace ember::cpu::onednn
