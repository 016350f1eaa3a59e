// conv2d_backward_im2col (onednn.hpp): the backward of a convolution with few input channels per group (an image
// model's first layer) as im2col + GEMM, split over the batch.
//
// oneDNN's backward-data kernel is slow with 3 input channels (2.6 ms at 3->32 @32, batch 32, one core), and its
// backward-weights kernel, though fast, sums each weight's N*H*W products in one float chain (grad_w ~10x further
// from the exact sums than a GEMM's blocked ones; the residual CNN's loss curve then left PyTorch's by 1.3e-4 in 3
// epochs). So each image goes through im2col and two GEMMs with its column buffer ([k, H_out*W_out], a few hundred
// KiB) still in L2: grad_w += grad[n] x col^T, col = w^T x grad[n], col2im(col). Until 2026-11-25 the same steps ran
// over the whole slice at once: a [k, N*H*W] column buffer (3.5 MiB at 3->32 @32, batch 32) and a transposed copy of
// grad, each a pass through memory; per image the 3->32 step went from ~4.4 to ~2.5 ms on one core
// (bench/README.md, "First-layer backward per image").
//
// Each pool thread takes a slice of the batch (onednn_slices.hpp); inside a slice the GEMMs are oneDNN's sgemm on
// that thread alone (OpenBLAS would either start its own threads inside each slice or serialize concurrent calls),
// and the slices' partial grad_w / grad_b are added in batch order (BatchPartials): the same bits on every run.
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
  float* col;  // [K, N_chunk * H_out * W_out]
  float* gg;   // grad as [C_out, N_chunk * H_out * W_out]
};

// The largest column buffer of a slice run as one chunk: while the columns and the transposed grad stay in L2 between
// im2col, the two GEMMs and col2im, two GEMMs over the whole slice beat one pair per image.
constexpr int64_t kWholeSliceColumnBytes = 512 << 10;

// C = op(A) op(B) (+ C when accumulate), row-major.
bool slice_gemm(bool sliced, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, bool accumulate = false) {
  const float beta = accumulate ? 1.0f : 0.0f;
  if (!sliced) {
    gemm<float>(trans_a, trans_b, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
    return true;
  }
  return dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc) ==
         dnnl_success;
}

// The images of one chunk (g.n of them): their part of grad_x, and grad_w summed over them, written or (accumulate)
// added. s: buffers for the chunk's columns and transposed grad.
bool backward_chunk(const Conv2dGeometry& g, bool sliced, const float* x, const float* w, const float* grad,
                    float* gx, float* gw, bool accumulate, Scratch s) {
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
  // grad_w (+)= grad x col^T, then grad_col = w^T x grad into the column buffer, which grad_w is done with.
  if (!slice_gemm(sliced, false, true, cout, k, l, gr, l, s.col, l, gw, k, accumulate)) return false;
  if (!slice_gemm(sliced, true, false, k, l, cout, w, k, gr, l, s.col, l)) return false;
  std::fill(gx, gx + g.n * g.c * g.h * g.w, 0.0f);  // col2im accumulates
  col2im(s.col, g, 0, gx);
  return true;
}

// How many images a chunk of this slice takes: all of them while their column buffer stays within
// kWholeSliceColumnBytes, otherwise one (a chunk of several images needs grad transposed into [C_out, N*H*W] first,
// a pass that cost more than the larger GEMMs saved: 3->32 @32 ran 3.9 ms per step in chunks of 2, 4 or 8 images
// against 2.4 ms one image at a time, and 4.5 ms whole).
int64_t chunk_images(const Conv2dGeometry& g) {
  const int64_t per_image = g.k() * g.ho * g.wo * static_cast<int64_t>(sizeof(float));
  return g.n * per_image <= kWholeSliceColumnBytes ? g.n : 1;
}

// One slice's images (g.n of them), per images at a time (s holds that many): its part of grad_x, and grad_w /
// grad_b summed over it (written).
bool backward_slice(const Conv2dGeometry& g, bool sliced, int64_t per, const float* x, const float* w,
                    const float* grad, float* gx, float* gw, float* gb, Scratch s) {
  const int64_t cout = g.cout, plane = g.ho * g.wo, in_image = g.c * g.h * g.w, out_image = cout * plane;
  for (int64_t lo = 0; lo < g.n; lo += per) {
    Conv2dGeometry gc = g;
    gc.n = std::min(per, g.n - lo);
    if (!backward_chunk(gc, sliced, x + lo * in_image, w, grad + lo * out_image, gx + lo * in_image, gw, lo > 0, s))
      return false;
  }
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
  // Per slice one chunk's column and transposed-grad buffers.
  const int64_t slices = batch_slices(g.n);
  Conv2dGeometry largest_slice = g;
  largest_slice.n = (g.n + slices - 1) / slices;
  const int64_t chunk = chunk_images(largest_slice);  // every slice's chunks, its buffers' size
  const int64_t col_floats = k * chunk * plane, gg_floats = chunk > 1 ? g.cout * chunk * plane : 0;
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
    if (!backward_slice(gs, sliced, chunk, x.data() + lo * in_image, w.data(), grad.data() + lo * out_image,
                        gx.data() + lo * in_image, pw, pb, Scratch{mine, mine + col_floats}))
      ok = false;
  });
  if (!ok) return std::nullopt;
  sums.add();
  return Conv2dGrads<CpuTensor<float>>{std::move(gx), std::move(gw), std::move(gb)};
}

}  // namespace ember::cpu::onednn
