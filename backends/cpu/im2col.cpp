// im2col / col2im (im2col.hpp): the copies between NCHW images and the column matrix a convolution's GEMMs read.
#include "backends/cpu/im2col.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include "backends/cpu/parallel.hpp"

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

// The loop nest both directions share: for each of the group's channels c (split over the pool), kernel tap (i, j)
// and image n, fn(tap, its flat range, the tap's [H_out, W_out] plane of image n in col, image n's channel c0 + c
// in img). Img is const T (im2col reads the images) or T (col2im writes them).
template <class T, class Img, class F>
void for_each_tap_plane(const Geom& g, int64_t c0, T* col, Img* img, F&& fn) {
  const int64_t hw = g.h * g.w, plane = g.ho * g.wo, l = g.l();
  parallel_for(g.cg, channel_grain(g), [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      for (int64_t i = 0; i < g.kh; ++i) {
        for (int64_t j = 0; j < g.kw; ++j) {
          const Tap t = tap(g, i, j);
          const std::optional<Flat> f = flat(g, t);
          T* block = col + ((c * g.kh + i) * g.kw + j) * l;
          for (int64_t n = 0; n < g.n; ++n) fn(t, f, block + n * plane, img + (n * g.c + c0 + c) * hw);
        }
      }
    }
  });
}

}  // namespace

template <class T>
void im2col(const T* x, const Geom& g, int64_t c0, T* col) {
  const int64_t plane = g.ho * g.wo;
  for_each_tap_plane(g, c0, col, x, [&](const Tap& t, const std::optional<Flat>& f, T* d, const T* src) {
    if (f) {
      zero(d, f->q0);
      std::memcpy(d + f->q0, src + f->q0 + f->delta, static_cast<std::size_t>(f->q1 - f->q0) * sizeof(T));
      zero(d + f->q1, plane - f->q1);
      zero_edges(d, g, t);
      return;
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
  });
}

template <class T>
void col2im(T* col, const Geom& g, int64_t c0, T* gx) {
  for_each_tap_plane(g, c0, col, gx, [&](const Tap& t, const std::optional<Flat>& f, T* s, T* dst) {
    if (f) {
      // Zero the wrapped-around entries so that one long add over [q0, q1) adds nothing for them.
      zero_edges(s, g, t);
      add(dst + f->q0 + f->delta, s + f->q0, f->q1 - f->q0, 1);
      return;
    }
    for (int64_t oh = t.rh.lo; oh < t.rh.hi; ++oh) {
      const T* srow = s + oh * g.wo + t.rw.lo;
      T* drow = dst + (oh * g.sh + t.offh) * g.w + t.rw.lo * g.sw + t.offw;
      add(drow, srow, t.rw.hi - t.rw.lo, g.sw);
    }
  });
}

template void im2col<float>(const float*, const Geom&, int64_t, float*);
template void im2col<double>(const double*, const Geom&, int64_t, double*);
template void col2im<float>(float*, const Geom&, int64_t, float*);
template void col2im<double>(double*, const Geom&, int64_t, double*);

}  // namespace ember::cpu
