// 2-D convolution as im2col + GEMM (f64, and f32 when oneDNN is absent or declines: onednn.hpp). The column buffer covers the whole batch, so each group is ONE large GEMM
// (OpenBLAS is far more efficient on one [C_out/g, K] x [K, N*H_out*W_out] product than on N small ones).
#include <algorithm>
#include <cstring>
#include <optional>

#include "backends/cpu/im2col.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/onednn.hpp"
#include "backends/cpu/parallel.hpp"
#include "engine/backend/conv_geometry.hpp"

namespace ember::cpu {
namespace {

using Geom = Conv2dGeometry;

template <class T>
T* scratch(std::shared_ptr<Buffer>& holder, int64_t elems) {
  holder = allocate(static_cast<std::size_t>(elems) * sizeof(T));
  return static_cast<T*>(holder->ptr);
}

}  // namespace

template <class T>
CpuTensor<T> conv2d(const CpuTensor<T>& x, const CpuTensor<T>& w, const CpuTensor<T>* bias,
                    const Conv2dOptions& o) {
  if (auto r = onednn::conv2d(x, w, bias, o)) return std::move(*r);  // f32 with oneDNN: its direct kernels
  const Geom g = conv2d_geometry(x.shape, w.shape, o);
  const int64_t cout = w.shape[0], cog = cout / o.groups, k = g.k(), l = g.l(), plane = g.ho * g.wo;
  CpuTensor<T> out(Shape{g.n, cout, g.ho, g.wo});
  if (out.numel() == 0) return out;

  std::shared_ptr<Buffer> col_buf, tmp_buf;
  T* col = scratch<T>(col_buf, k * l);
  // With one image the GEMM result [C_out/g, H_out*W_out] already is the output slice: write it in place.
  T* tmp = g.n == 1 ? nullptr : scratch<T>(tmp_buf, cog * l);
  const T* b = bias ? bias->data() : nullptr;
  for (int64_t grp = 0; grp < o.groups; ++grp) {
    im2col(x.data(), g, grp * g.cg, col);
    T* res = g.n == 1 ? out.data() + grp * cog * plane : tmp;
    gemm<T>(false, false, cog, l, k, T(1), w.data() + grp * cog * k, k, col, l, T(0), res, l);
    if (res != tmp && !b) continue;  // already in place, nothing to add
    // [C_out/g, N, H_out*W_out] -> NCHW, adding the bias on the way (in place when res is the output).
    parallel_for(cog * g.n, std::max<int64_t>(1, kParallelThreshold / plane), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const int64_t co = r / g.n, n = r % g.n;
        const T* s = res + co * l + n * plane;
        T* d = out.data() + (n * cout + grp * cog + co) * plane;
        const T bv = b ? b[grp * cog + co] : T(0);
        for (int64_t p = 0; p < plane; ++p) d[p] = s[p] + bv;
      }
    });
  }
  return out;
}

template <class T>
Conv2dGrads<CpuTensor<T>> conv2d_backward(const CpuTensor<T>& x, const CpuTensor<T>& w, const CpuTensor<T>& grad,
                                          bool has_bias, const Conv2dOptions& o) {
  if (auto r = onednn::conv2d_backward(x, w, grad, has_bias, o)) return std::move(*r);
  const Geom g = conv2d_geometry(x.shape, w.shape, o);
  const int64_t cout = w.shape[0], cog = cout / o.groups, k = g.k(), l = g.l(), plane = g.ho * g.wo;
  CpuTensor<T> gx(x.shape), gw(w.shape);
  std::fill(gx.data(), gx.data() + gx.numel(), T(0));  // col2im accumulates
  if (grad.numel() == 0) {
    // No output, so every gradient is zero. The code below would still size im2col's column buffer by
    // N * H_out * W_out and walk N per channel and tap, and N may be 2^40 in an empty [2^40, C, 0, W] batch
    // (padded to a nonzero height): return at once instead.
    std::fill(gw.data(), gw.data() + gw.numel(), T(0));
    std::optional<CpuTensor<T>> gb;
    if (has_bias) gb = CpuTensor<T>(Shape{cout});
    if (gb) std::fill(gb->data(), gb->data() + cout, T(0));
    return {std::move(gx), std::move(gw), std::move(gb)};
  }

  std::shared_ptr<Buffer> col_buf, gg_buf;
  T* col = scratch<T>(col_buf, k * l);
  // With one image, grad's group slice already is the [C_out/g, H_out*W_out] GEMM operand.
  T* gg = g.n == 1 ? nullptr : scratch<T>(gg_buf, cog * l);
  for (int64_t grp = 0; grp < o.groups; ++grp) {
    const T* gr = grad.data() + grp * cog * plane;
    if (g.n != 1) {
      // NCHW -> [C_out/g, N * H_out*W_out], the layout the forward GEMM produced.
      parallel_for(cog * g.n, std::max<int64_t>(1, kParallelThreshold / std::max<int64_t>(1, plane)),
                   [&](int64_t lo, int64_t hi) {
                     for (int64_t r = lo; r < hi; ++r) {
                       const int64_t co = r / g.n, n = r % g.n;
                       std::memcpy(gg + co * l + n * plane, gr + (n * cout + co) * plane,
                                   static_cast<std::size_t>(plane) * sizeof(T));
                     }
                   });
      gr = gg;
    }
    im2col(x.data(), g, grp * g.cg, col);
    // grad_w_g = grad_g x col^T.
    gemm<T>(false, true, cog, k, l, T(1), gr, l, col, l, T(0), gw.data() + grp * cog * k, k);
    // grad_col = w_g^T x grad_g, reusing the column buffer now that grad_w is done with it.
    gemm<T>(true, false, k, l, cog, T(1), w.data() + grp * cog * k, k, gr, l, T(0), col, l);
    col2im(col, g, grp * g.cg, gx.data());
  }

  std::optional<CpuTensor<T>> gb;
  if (has_bias) {
    CpuTensor<T> b(Shape{cout});
    for (int64_t co = 0; co < cout; ++co) {
      T s = T(0);
      for (int64_t n = 0; n < g.n; ++n) s += lane_sum(grad.data() + (n * cout + co) * plane, plane);
      b.data()[co] = s;
    }
    gb = std::move(b);
  }
  return {std::move(gx), std::move(gw), std::move(gb)};
}

template <class T>
CpuTensor<T> conv2d_relu(const CpuTensor<T>& x, const CpuTensor<T>& w, const CpuTensor<T>* bias,
                         const Conv2dOptions& o) {
  if (auto r = onednn::conv2d(x, w, bias, o, onednn::PostOp::Relu)) return std::move(*r);
  return unary(conv2d(x, w, bias, o), UnaryOp::Relu);
}

template <class T>
CpuTensor<T> conv2d_relu_max_pool(const CpuTensor<T>& x, const CpuTensor<T>& w, const CpuTensor<T>* bias,
                                  const Conv2dOptions& o, const Pool2dOptions& pool) {
  if (auto r = onednn::conv2d_max_pool(x, w, bias, o, onednn::PostOp::Relu, pool)) return std::move(*r);
  return max_pool2d(conv2d_relu(x, w, bias, o), pool).output;
}

template CpuTensor<float> conv2d<float>(const CpuTensor<float>&, const CpuTensor<float>&, const CpuTensor<float>*,
                                        const Conv2dOptions&);
template CpuTensor<double> conv2d<double>(const CpuTensor<double>&, const CpuTensor<double>&,
                                          const CpuTensor<double>*, const Conv2dOptions&);
template CpuTensor<float> conv2d_relu<float>(const CpuTensor<float>&, const CpuTensor<float>&,
                                             const CpuTensor<float>*, const Conv2dOptions&);
template CpuTensor<double> conv2d_relu<double>(const CpuTensor<double>&, const CpuTensor<double>&,
                                               const CpuTensor<double>*, const Conv2dOptions&);
template CpuTensor<float> conv2d_relu_max_pool<float>(const CpuTensor<float>&, const CpuTensor<float>&,
                                                      const CpuTensor<float>*, const Conv2dOptions&,
                                                      const Pool2dOptions&);
template CpuTensor<double> conv2d_relu_max_pool<double>(const CpuTensor<double>&, const CpuTensor<double>&,
                                                        const CpuTensor<double>*, const Conv2dOptions&,
                                                        const Pool2dOptions&);
template Conv2dGrads<CpuTensor<float>> conv2d_backward<float>(const CpuTensor<float>&, const CpuTensor<float>&,
                                                              const CpuTensor<float>&, bool, const Conv2dOptions&);
template Conv2dGrads<CpuTensor<double>> conv2d_backward<double>(const CpuTensor<double>&, const CpuTensor<double>&,
                                                                const CpuTensor<double>&, bool,
                                                                const Conv2dOptions&);

}  // namespace ember::cpu
