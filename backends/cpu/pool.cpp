// 2-D pooling over contiguous NCHW input, PyTorch semantics (ceil_mode false). Every (n, c) plane is independent,
// so all kernels parallelize over planes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/kernels.hpp"
#include "backends/cpu/max_pool_vec.hpp"
#include "backends/cpu/parallel.hpp"
#include "engine/backend/pool_geometry.hpp"

namespace ember::cpu {
namespace {

struct Span {
  int64_t lo, hi;
};

// Kernel taps t in [lo, hi) with 0 <= start + t*d < size: the window clipped to the image, so the inner loops
// need no bounds checks (padding never contributes).
Span taps(int64_t start, int64_t size, int64_t k, int64_t d) {
  const int64_t lo = start >= 0 ? 0 : (-start + d - 1) / d;
  const int64_t hi = start >= size ? 0 : (size - 1 - start) / d + 1;
  const int64_t l = std::min(lo, k), h = std::min(hi, k);
  return {l, std::max(l, h)};
}

// Runs fn(plane) for every (n, c) plane, in parallel when the total work is large.
template <class F>
void for_planes(int64_t planes, int64_t work_per_plane, F&& fn) {
  parallel_for(planes, std::max<int64_t>(1, kParallelThreshold / std::max<int64_t>(1, work_per_plane)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t p = lo; p < hi; ++p) fn(p);
               });
}

// Max pooling without padding: every window lies inside the image, so no per-window clipping (taps() divides);
// KH / KW > 0 fix the window at compile time (the common 2x2 and 3x3), unrolled into straight-line compares.
// Same rule as the general kernel: the first tap that beats the running best (or is NaN) wins.
template <int KH, int KW, class T>
void max_pool_unpadded(const T* src, T* dst, int64_t* di, const Pool2dGeometry& g) {
  const int64_t kh = KH > 0 ? KH : g.kh, kw = KW > 0 ? KW : g.kw;
  for (int64_t oh = 0; oh < g.ho; ++oh) {
    for (int64_t ow = 0; ow < g.wo; ++ow) {
      const int64_t origin = oh * g.sh * g.w + ow * g.sw;
      T best = -std::numeric_limits<T>::infinity();
      int64_t arg = origin;
      for (int64_t i = 0; i < kh; ++i) {
        for (int64_t j = 0; j < kw; ++j) {
          const int64_t at = origin + i * g.dh * g.w + j * g.dw;
          const T v = src[at];
          if (v > best || std::isnan(v)) {
            best = v;
            arg = at;
          }
        }
      }
      dst[oh * g.wo + ow] = best;
      di[oh * g.wo + ow] = arg;
    }
  }
}

// One output of the general (padded) kernel: the window clipped to the image, so padding never contributes.
template <class T>
void max_pool_window(const T* src, const Pool2dGeometry& g, int64_t oh, int64_t ow, T* dst, int64_t* di) {
  const int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
  const Span th = taps(h0, g.h, g.kh, g.dh);
  const Span tw = taps(w0, g.w, g.kw, g.dw);
  // Padding is -inf; like PyTorch, the first in-image tap is the answer if nothing beats -inf, and NaN wins.
  T best = -std::numeric_limits<T>::infinity();
  // An all-padding window (callers' pad <= kernel/2 rules it out) gets index -1, which backward skips.
  const bool empty = th.lo == th.hi || tw.lo == tw.hi;
  int64_t arg = empty ? -1 : (h0 + th.lo * g.dh) * g.w + (w0 + tw.lo * g.dw);
  for (int64_t i = th.lo; i < th.hi; ++i) {
    const int64_t row = (h0 + i * g.dh) * g.w;
    for (int64_t j = tw.lo; j < tw.hi; ++j) {
      const int64_t at = row + w0 + j * g.dw;
      const T v = src[at];
      if (v > best || std::isnan(v)) {
        best = v;
        arg = at;
      }
    }
  }
  *dst = best;
  *di = arg;
}

}  // namespace

template <class T>
MaxPoolResult<CpuTensor<T>, Index> max_pool2d(const CpuTensor<T>& x, const Pool2dOptions& o) {
  const Pool2dGeometry g = pool2d_geometry(x.shape, o);
  CpuTensor<T> out(g.out_shape());
  Index idx(g.out_shape());
  const int64_t in_plane = g.h * g.w, out_plane = g.ho * g.wo;
  // Runs kernel(src, dst, di) on every plane's input and outputs.
  const auto each_plane = [&](auto&& kernel) {
    for_planes(g.planes(), out_plane * g.kh * g.kw, [&](int64_t p) {
      kernel(x.data() + p * in_plane, out.data() + p * out_plane, idx.data() + p * out_plane);
    });
  };
  if constexpr (std::is_same_v<T, float>) {
    if (max_pool_vectorized_usable(g)) {  // same values and indices as the scalar kernels below
      const MaxPoolWindows w = max_pool_windows(g);
      each_plane([&](const T* src, T* dst, int64_t* di) {
        max_pool_inner_avx512(src, dst, di, w);
        for (int32_t q : w.border) max_pool_window(src, g, q / g.wo, q % g.wo, dst + q, di + q);
      });
      return {std::move(out), std::move(idx)};
    }
  }
  if (g.ph == 0 && g.pw == 0) {
    each_plane([&](const T* src, T* dst, int64_t* di) {
      if (g.kh == 2 && g.kw == 2) max_pool_unpadded<2, 2>(src, dst, di, g);
      else if (g.kh == 3 && g.kw == 3) max_pool_unpadded<3, 3>(src, dst, di, g);
      else max_pool_unpadded<0, 0>(src, dst, di, g);
    });
  } else {
    each_plane([&](const T* src, T* dst, int64_t* di) {
      for (int64_t oh = 0; oh < g.ho; ++oh)
        for (int64_t ow = 0; ow < g.wo; ++ow)
          max_pool_window(src, g, oh, ow, dst + oh * g.wo + ow, di + oh * g.wo + ow);
    });
  }
  return {std::move(out), std::move(idx)};
}

template <class T>
CpuTensor<T> max_pool2d_backward(const CpuTensor<T>& x, const CpuTensor<T>& grad, const Index& indices) {
  const int64_t planes = x.shape[0] * x.shape[1], hw = x.shape[2] * x.shape[3];
  const int64_t ohw = grad.shape[2] * grad.shape[3];
  // Each plane is zeroed by the thread that scatters into it, just before: a serial fill of the whole gradient
  // first (8 MiB for the bench's 32 x 64 x 32 x 32) was the backward's unscaled part on two threads.
  CpuTensor<T> gx(x.shape);
  for_planes(planes, hw, [&](int64_t p) {
    T* d = gx.data() + p * hw;
    std::fill(d, d + hw, T(0));
    const T* g = grad.data() + p * ohw;
    const int64_t* ix = indices.data() + p * ohw;
    for (int64_t q = 0; q < ohw; ++q)  // += : overlapping windows may pick the same pixel
      if (ix[q] >= 0) d[ix[q]] += g[q];
  });
  return gx;
}

template <class T>
CpuTensor<T> avg_pool2d(const CpuTensor<T>& x, const Pool2dOptions& o) {
  const Pool2dGeometry g = pool2d_geometry(x.shape, o);
  const int64_t H = g.h, W = g.w, Ho = g.ho, Wo = g.wo;
  CpuTensor<T> out(g.out_shape());
  for_planes(g.planes(), Ho * Wo * g.kh * g.kw, [&](int64_t p) {
    const T* src = x.data() + p * H * W;
    T* dst = out.data() + p * Ho * Wo;
    for (int64_t oh = 0; oh < Ho; ++oh) {
      for (int64_t ow = 0; ow < Wo; ++ow) {
        const AvgPoolWindow a = avg_pool_window(g, oh, ow);
        T s = T(0);
        for (int64_t h = a.h0; h < a.h1; ++h)
          for (int64_t w = a.w0; w < a.w1; ++w) s += src[h * W + w];
        dst[oh * Wo + ow] = s / static_cast<T>(a.divisor);
      }
    }
  });
  return out;
}

template <class T>
CpuTensor<T> avg_pool2d_backward(const CpuTensor<T>& x, const CpuTensor<T>& grad, const Pool2dOptions& o) {
  const Pool2dGeometry g = pool2d_geometry(x.shape, o, grad.shape[2], grad.shape[3]);
  const int64_t H = g.h, W = g.w, Ho = g.ho, Wo = g.wo;
  CpuTensor<T> gx(x.shape);  // each plane zeroed by its own thread (max_pool2d_backward says why)
  for_planes(g.planes(), Ho * Wo * g.kh * g.kw, [&](int64_t p) {
    T* d = gx.data() + p * H * W;
    std::fill(d, d + H * W, T(0));
    const T* gp = grad.data() + p * Ho * Wo;
    for (int64_t oh = 0; oh < Ho; ++oh) {
      for (int64_t ow = 0; ow < Wo; ++ow) {
        const AvgPoolWindow a = avg_pool_window(g, oh, ow);
        const T v = gp[oh * Wo + ow] / static_cast<T>(a.divisor);
        for (int64_t h = a.h0; h < a.h1; ++h)
          for (int64_t w = a.w0; w < a.w1; ++w) d[h * W + w] += v;
      }
    }
  });
  return gx;
}

template <class T>
CpuTensor<T> adaptive_avg_pool2d(const CpuTensor<T>& x, std::array<int64_t, 2> out_hw) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t Ho = out_hw[0], Wo = out_hw[1];
  CpuTensor<T> out(Shape{N, C, Ho, Wo});
  for_planes(N * C, H * W, [&](int64_t p) {
    const T* src = x.data() + p * H * W;
    T* dst = out.data() + p * Ho * Wo;
    for (int64_t oh = 0; oh < Ho; ++oh) {
      const int64_t h0 = adaptive_start(oh, H, Ho), h1 = adaptive_end(oh, H, Ho);
      for (int64_t ow = 0; ow < Wo; ++ow) {
        const int64_t w0 = adaptive_start(ow, W, Wo), w1 = adaptive_end(ow, W, Wo);
        T s = T(0);
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) s += src[h * W + w];
        dst[oh * Wo + ow] = s / static_cast<T>((h1 - h0) * (w1 - w0));
      }
    }
  });
  return out;
}

template <class T>
CpuTensor<T> adaptive_avg_pool2d_backward(const CpuTensor<T>& x, const CpuTensor<T>& grad) {
  const int64_t H = x.shape[2], W = x.shape[3], Ho = grad.shape[2], Wo = grad.shape[3];
  CpuTensor<T> gx(x.shape);  // each plane zeroed by its own thread (max_pool2d_backward says why)
  for_planes(x.shape[0] * x.shape[1], H * W, [&](int64_t p) {
    T* d = gx.data() + p * H * W;
    std::fill(d, d + H * W, T(0));
    const T* g = grad.data() + p * Ho * Wo;
    for (int64_t oh = 0; oh < Ho; ++oh) {
      const int64_t h0 = adaptive_start(oh, H, Ho), h1 = adaptive_end(oh, H, Ho);
      for (int64_t ow = 0; ow < Wo; ++ow) {
        const int64_t w0 = adaptive_start(ow, W, Wo), w1 = adaptive_end(ow, W, Wo);
        const T v = g[oh * Wo + ow] / static_cast<T>((h1 - h0) * (w1 - w0));
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) d[h * W + w] += v;
      }
    }
  });
  return gx;
}

template MaxPoolResult<CpuTensor<float>, Index> max_pool2d<float>(const CpuTensor<float>&, const Pool2dOptions&);
template MaxPoolResult<CpuTensor<double>, Index> max_pool2d<double>(const CpuTensor<double>&, const Pool2dOptions&);
template CpuTensor<float> max_pool2d_backward<float>(const CpuTensor<float>&, const CpuTensor<float>&, const Index&);
template CpuTensor<double> max_pool2d_backward<double>(const CpuTensor<double>&, const CpuTensor<double>&,
                                                       const Index&);
template CpuTensor<float> avg_pool2d<float>(const CpuTensor<float>&, const Pool2dOptions&);
template CpuTensor<double> avg_pool2d<double>(const CpuTensor<double>&, const Pool2dOptions&);
template CpuTensor<float> avg_pool2d_backward<float>(const CpuTensor<float>&, const CpuTensor<float>&,
                                                     const Pool2dOptions&);
template CpuTensor<double> avg_pool2d_backward<double>(const CpuTensor<double>&, const CpuTensor<double>&,
                                                       const Pool2dOptions&);
template CpuTensor<float> adaptive_avg_pool2d<float>(const CpuTensor<float>&, std::array<int64_t, 2>);
template CpuTensor<double> adaptive_avg_pool2d<double>(const CpuTensor<double>&, std::array<int64_t, 2>);
template CpuTensor<float> adaptive_avg_pool2d_backward<float>(const CpuTensor<float>&, const CpuTensor<float>&);
template CpuTensor<double> adaptive_avg_pool2d_backward<double>(const CpuTensor<double>&, const CpuTensor<double>&);

}  // namespace ember::cpu
