// 2-D convolution as im2col + GEMM (f64, and f32 when oneDNN is absent or declines: onednn.hpp). The column buffer covers the whole batch, so each group is ONE large GEMM
// (OpenBLAS is far more efficient on one [C_out/g, K] x [K, N*H_out*W_out] product than on N small ones).
#include <algorithm>
#include <cstring>
#include <optional>

#include "backends/cpu/kernels.hpp"
#include "backends/cpu/onednn.hpp"
#include "backends/cpu/parallel.hpp"
#include "engine/backend/conv_geometry.hpp"

namespace ember::cpu {
namespace {

// Everything im2col/col2im need about one convolution.
using Geom = Conv2dGeometry;

// Outputs o in [lo, hi) read an in-bounds input coordinate o*s + off (off = kernel tap * dilation - padding),
// so the inner loops need no per-element bounds check.
struct Span {
  int64_t lo, hi;
};
Span valid(int64_t out, int64_t size, int64_t s, int64_t off) {
  const int64_t lo = off >= 0 ? 0 : (-off + s - 1) / s;
  const int64_t hi = size - off <= 0 ? 0 : (size - 1 - off) / s + 1;
  const int64_t l = std::min(lo, out), h = std::min(hi, out);
  return {l, std::max(l, h)};
}

// Channels per parallel chunk: enough that each chunk moves ~kParallelThreshold elements.
int64_t channel_grain(const Geom& g) {
  return std::max<int64_t>(1, kParallelThreshold / std::max<int64_t>(1, g.kh * g.kw * g.l()));
}

// Plain loops: at -O2 GCC 12 leaves a variable-length loop scalar (or makes it a memcpy/memset call, whose
// overhead dominates the 16-element rows typical here). Fixed blocks of 8 are straight-line code that SLP turns
// into vector ops.
constexpr int64_t kBlock = 8;

template <class T>
void zero(T* d, int64_t n) {
  for (int64_t t = 0; t < n; ++t) d[t] = T(0);
}

// d[t] = s[t*stride] for t < n.
template <class T>
void copy(T* __restrict d, const T* __restrict s, int64_t n, int64_t stride) {
  if (stride != 1) {
    for (int64_t t = 0; t < n; ++t) d[t] = s[t * stride];
    return;
  }
  int64_t t = 0;
  for (; t + kBlock <= n; t += kBlock)
    for (int64_t u = 0; u < kBlock; ++u) d[t + u] = s[t + u];
  for (; t < n; ++t) d[t] = s[t];
}

// d[t*stride] += s[t] for t < n.
template <class T>
void add(T* __restrict d, const T* __restrict s, int64_t n, int64_t stride) {
  if (stride != 1) {
    for (int64_t t = 0; t < n; ++t) d[t * stride] += s[t];
    return;
  }
  int64_t t = 0;
  for (; t + kBlock <= n; t += kBlock)
    for (int64_t u = 0; u < kBlock; ++u) d[t + u] += s[t + u];
  for (; t < n; ++t) d[t] += s[t];
}

// Sum with independent partial sums, so the compiler can vectorize and the adds don't serialize on latency.
template <class T>
T sum(const T* p, int64_t n) {
  constexpr int kLanes = 16;
  T acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int r = 0; r < kLanes; ++r) acc[r] += p[i + r];
  T s = T(0);
  for (; i < n; ++i) s += p[i];
  for (int r = 0; r < kLanes; ++r) s += acc[r];
  return s;
}

// One kernel tap (i, j): the [H_out, W_out] block of outputs that read input pixel
// (oh*sh + offh, ow*sw + offw), and the spans of oh / ow for which that pixel is inside the image.
struct Tap {
  int64_t offh, offw;
  Span rh, rw;  // both empty if the tap only ever reads padding
};
Tap tap(const Geom& g, int64_t i, int64_t j) {
  Tap t{i * g.dh - g.ph, j * g.dw - g.pw, {}, {}};
  t.rh = valid(g.ho, g.h, g.sh, t.offh);
  t.rw = valid(g.wo, g.w, g.sw, t.offw);
  if (t.rh.lo == t.rh.hi || t.rw.lo == t.rw.hi) t.rh = t.rw = Span{0, 0};
  return t;
}

// With unit stride and W_out == W, output and input rows have the same length, so the tap's in-image block is
// one contiguous range [q0, q1) of the output plane reading input q + delta. Entries in that range whose
// column lies outside rw read a wrapped-around neighbour and must be masked by the caller.
struct Flat {
  int64_t q0, q1, delta;
};
std::optional<Flat> flat(const Geom& g, const Tap& t) {
  if (g.sh != 1 || g.sw != 1 || g.wo != g.w || t.rh.lo == t.rh.hi) return std::nullopt;
  return Flat{t.rh.lo * g.wo + t.rw.lo, (t.rh.hi - 1) * g.wo + t.rw.hi, t.offh * g.w + t.offw};
}

// Zeroes the columns outside rw in rows rh of one output plane.
template <class T>
void zero_edges(T* d, const Geom& g, const Tap& t) {
  // Column-major order: the edges are a column or two wide, and per-row loops would become memset calls.
  for (int64_t ow = 0; ow < t.rw.lo; ++ow)
    for (int64_t oh = t.rh.lo; oh < t.rh.hi; ++oh) d[oh * g.wo + ow] = T(0);
  for (int64_t ow = t.rw.hi; ow < g.wo; ++ow)
    for (int64_t oh = t.rh.lo; oh < t.rh.hi; ++oh) d[oh * g.wo + ow] = T(0);
}

// col[(c*kh + i)*kw + j, (n*ho + oh)*wo + ow] = x[n, c0 + c, oh*sh + i*dh - ph, ow*sw + j*dw - pw] (0 if padded).
template <class T>
void im2col(const T* x, const Geom& g, int64_t c0, T* col) {
  const int64_t hw = g.h * g.w, plane = g.ho * g.wo, l = g.l();
  parallel_for(g.cg, channel_grain(g), [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      for (int64_t i = 0; i < g.kh; ++i) {
        for (int64_t j = 0; j < g.kw; ++j) {
          const Tap t = tap(g, i, j);
          const std::optional<Flat> f = flat(g, t);
          T* dst = col + ((c * g.kh + i) * g.kw + j) * l;
          for (int64_t n = 0; n < g.n; ++n) {
            const T* src = x + (n * g.c + c0 + c) * hw;
            T* d = dst + n * plane;
            if (f) {
              zero(d, f->q0);
              std::memcpy(d + f->q0, src + f->q0 + f->delta, static_cast<std::size_t>(f->q1 - f->q0) * sizeof(T));
              zero(d + f->q1, plane - f->q1);
              zero_edges(d, g, t);
              continue;
            }
            zero(d, t.rh.lo * g.wo);
            for (int64_t oh = t.rh.lo; oh < t.rh.hi; ++oh) {
              T* drow = d + oh * g.wo;
              zero(drow, t.rw.lo);
              // Input at ow = rw.lo.
              const T* srow = src + (oh * g.sh + t.offh) * g.w + t.rw.lo * g.sw + t.offw;
              copy(drow + t.rw.lo, srow, t.rw.hi - t.rw.lo, g.sw);
              zero(drow + t.rw.hi, g.wo - t.rw.hi);
            }
            zero(d + t.rh.hi * g.wo, plane - t.rh.hi * g.wo);
          }
        }
      }
    }
  });
}

// The adjoint of im2col: grad_x[n, c0 + c, ...] += col[...] over every tap that read that pixel. grad_x must be
// zeroed first. Chunks own whole channels, so threads never write the same pixel. Clobbers col's padded entries.
template <class T>
void col2im(T* col, const Geom& g, int64_t c0, T* gx) {
  const int64_t hw = g.h * g.w, plane = g.ho * g.wo, l = g.l();
  parallel_for(g.cg, channel_grain(g), [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      for (int64_t i = 0; i < g.kh; ++i) {
        for (int64_t j = 0; j < g.kw; ++j) {
          const Tap t = tap(g, i, j);
          const std::optional<Flat> f = flat(g, t);
          T* src = col + ((c * g.kh + i) * g.kw + j) * l;
          for (int64_t n = 0; n < g.n; ++n) {
            T* dst = gx + (n * g.c + c0 + c) * hw;
            T* s = src + n * plane;
            if (f) {
              // Zero the wrapped-around entries so that one long add over [q0, q1) adds nothing for them.
              zero_edges(s, g, t);
              add(dst + f->q0 + f->delta, s + f->q0, f->q1 - f->q0, 1);
              continue;
            }
            for (int64_t oh = t.rh.lo; oh < t.rh.hi; ++oh) {
              const T* srow = s + oh * g.wo + t.rw.lo;
              T* drow = dst + (oh * g.sh + t.offh) * g.w + t.rw.lo * g.sw + t.offw;
              add(drow, srow, t.rw.hi - t.rw.lo, g.sw);
            }
          }
        }
      }
    }
  });
}

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

  // Few input channels per group (an image's first layer), where oneDNN's whole backward declined above: its
  // backward-weights kernel still beats im2col + GEMM (onednn.hpp), so only the grad input is computed here.
  std::optional<onednn::WeightGrads<CpuTensor<T>>> dnn_weights = onednn::conv2d_backward_weights(x, w, grad, has_bias, o);
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
    if (!dnn_weights) {
      im2col(x.data(), g, grp * g.cg, col);
      // grad_w_g = grad_g x col^T.
      gemm<T>(false, true, cog, k, l, T(1), gr, l, col, l, T(0), gw.data() + grp * cog * k, k);
    }
    // grad_col = w_g^T x grad_g, reusing the column buffer now that grad_w is done with it.
    gemm<T>(true, false, k, l, cog, T(1), w.data() + grp * cog * k, k, gr, l, T(0), col, l);
    col2im(col, g, grp * g.cg, gx.data());
  }

  if (dnn_weights) return {std::move(gx), std::move(dnn_weights->weight), std::move(dnn_weights->bias)};
  std::optional<CpuTensor<T>> gb;
  if (has_bias) {
    CpuTensor<T> b(Shape{cout});
    for (int64_t co = 0; co < cout; ++co) {
      T s = T(0);
      for (int64_t n = 0; n < g.n; ++n) s += sum(grad.data() + (n * cout + co) * plane, plane);
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
