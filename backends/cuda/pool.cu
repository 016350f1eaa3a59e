// 2-D pooling over contiguous NCHW input, PyTorch semantics (ceil_mode false), one thread per output element
// (forward) or per input pixel (average backward, which gathers the windows covering it, so no atomics).
// Max pooling's backward scatters through the recorded indices with atomics: overlapping windows may pick the
// same pixel.
#include <cmath>

#include "backends/cuda/kernels.hpp"
#include "backends/cuda/runtime.cuh"
#include "engine/backend/pool_geometry.hpp"

namespace ember::cuda {
namespace {

__global__ void max_pool_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t* __restrict__ idx,
                                Pool2dGeometry g) {
  const int64_t total = g.planes() * g.ho * g.wo;
  EMBER_CUDA_LOOP(t, total) {
    const int64_t ow = t % g.wo, oh = (t / g.wo) % g.ho, p = t / (g.wo * g.ho);
    const float* src = x + p * g.h * g.w;
    const int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
    // Padding is -inf; like PyTorch the first in-image tap is the answer if nothing beats -inf, and NaN wins.
    float best = -INFINITY;
    int64_t arg = -1;  // an all-padding window keeps -1, which backward skips
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t hh = h0 + i * g.dh;
      if (hh < 0 || hh >= g.h) continue;
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t ww = w0 + j * g.dw;
        if (ww < 0 || ww >= g.w) continue;
        const int64_t at = hh * g.w + ww;
        const float v = src[at];
        if (arg < 0) arg = at;
        if (v > best || isnan(v)) {  // exactly the CPU backend's rule (a later NaN takes the index)
          best = v;
          arg = at;
        }
      }
    }
    y[t] = best;
    idx[t] = arg;
  }
}

__global__ void max_pool_backward_kernel(const float* __restrict__ grad, const int64_t* __restrict__ idx,
                                         float* __restrict__ gx, int64_t planes, int64_t ohw, int64_t hw) {
  EMBER_CUDA_LOOP(t, planes * ohw) {
    const int64_t i = idx[t];
    if (i >= 0) atomicAdd(gx + (t / ohw) * hw + i, grad[t]);
  }
}

__global__ void avg_pool_kernel(const float* __restrict__ x, float* __restrict__ y, Pool2dGeometry g) {
  const int64_t total = g.planes() * g.ho * g.wo;
  EMBER_CUDA_LOOP(t, total) {
    const int64_t ow = t % g.wo, oh = (t / g.wo) % g.ho, p = t / (g.wo * g.ho);
    const float* src = x + p * g.h * g.w;
    const AvgPoolWindow a = avg_pool_window(g, oh, ow);
    float s = 0.0f;
    for (int64_t h = a.h0; h < a.h1; ++h)
      for (int64_t w = a.w0; w < a.w1; ++w) s += src[h * g.w + w];
    y[t] = s / static_cast<float>(a.divisor);
  }
}

// Outputs o whose window [o*s - p, o*s - p + k) can contain pixel i: a superset, checked exactly by the caller.
__device__ void covering(int64_t i, int64_t k, int64_t s, int64_t p, int64_t out, int64_t& lo, int64_t& hi) {
  const int64_t t = i + p;  // o*s <= t < o*s + k
  lo = t - k + 1 <= 0 ? 0 : (t - k + 1 + s - 1) / s;
  hi = min(out, t / s + 1);
}

__global__ void avg_pool_backward_kernel(const float* __restrict__ grad, float* __restrict__ gx, Pool2dGeometry g) {
  const int64_t total = g.planes() * g.h * g.w;
  EMBER_CUDA_LOOP(t, total) {
    const int64_t wi = t % g.w, hi = (t / g.w) % g.h, p = t / (g.w * g.h);
    const float* gp = grad + p * g.ho * g.wo;
    int64_t oh0, oh1, ow0, ow1;
    covering(hi, g.kh, g.sh, g.ph, g.ho, oh0, oh1);
    covering(wi, g.kw, g.sw, g.pw, g.wo, ow0, ow1);
    float s = 0.0f;
    for (int64_t oh = oh0; oh < oh1; ++oh) {
      for (int64_t ow = ow0; ow < ow1; ++ow) {
        const AvgPoolWindow a = avg_pool_window(g, oh, ow);
        if (hi >= a.h0 && hi < a.h1 && wi >= a.w0 && wi < a.w1) s += gp[oh * g.wo + ow] / static_cast<float>(a.divisor);
      }
    }
    gx[t] = s;
  }
}

__global__ void adaptive_avg_kernel(const float* __restrict__ x, float* __restrict__ y, Pool2dGeometry g) {
  const int64_t total = g.planes() * g.ho * g.wo;
  EMBER_CUDA_LOOP(t, total) {
    const int64_t ow = t % g.wo, oh = (t / g.wo) % g.ho, p = t / (g.wo * g.ho);
    const float* src = x + p * g.h * g.w;
    const int64_t h0 = adaptive_start(oh, g.h, g.ho), h1 = adaptive_end(oh, g.h, g.ho);
    const int64_t w0 = adaptive_start(ow, g.w, g.wo), w1 = adaptive_end(ow, g.w, g.wo);
    float s = 0.0f;
    for (int64_t h = h0; h < h1; ++h)
      for (int64_t w = w0; w < w1; ++w) s += src[h * g.w + w];
    y[t] = s / static_cast<float>((h1 - h0) * (w1 - w0));
  }
}

// Outputs whose adaptive window contains pixel i lie in [floor(i*out/in), ceil((i+1)*out/in)); one more on each
// side keeps the range a superset under integer rounding, and the caller checks containment exactly.
__device__ void adaptive_covering(int64_t i, int64_t in, int64_t out, int64_t& lo, int64_t& hi) {
  lo = max(int64_t{0}, (i * out) / in - 1);
  hi = min(out, ((i + 1) * out + in - 1) / in + 1);
}

__global__ void adaptive_avg_backward_kernel(const float* __restrict__ grad, float* __restrict__ gx, Pool2dGeometry g) {
  const int64_t total = g.planes() * g.h * g.w;
  EMBER_CUDA_LOOP(t, total) {
    const int64_t wi = t % g.w, hi = (t / g.w) % g.h, p = t / (g.w * g.h);
    const float* gp = grad + p * g.ho * g.wo;
    int64_t oh0, oh1, ow0, ow1;
    adaptive_covering(hi, g.h, g.ho, oh0, oh1);
    adaptive_covering(wi, g.w, g.wo, ow0, ow1);
    float s = 0.0f;
    for (int64_t oh = oh0; oh < oh1; ++oh) {
      const int64_t h0 = adaptive_start(oh, g.h, g.ho), h1 = adaptive_end(oh, g.h, g.ho);
      if (hi < h0 || hi >= h1) continue;
      for (int64_t ow = ow0; ow < ow1; ++ow) {
        const int64_t w0 = adaptive_start(ow, g.w, g.wo), w1 = adaptive_end(ow, g.w, g.wo);
        if (wi < w0 || wi >= w1) continue;
        s += gp[oh * g.wo + ow] / static_cast<float>((h1 - h0) * (w1 - w0));
      }
    }
    gx[t] = s;
  }
}

}  // namespace

MaxPoolResult<CudaTensor<float>, Index> max_pool2d(const CudaTensor<float>& x, const Pool2dOptions& o) {
  const Pool2dGeometry g = pool2d_geometry(x.shape, o);
  const int dev = x.device();
  DeviceContext& ctx = context(dev);
  CudaTensor<float> y(g.out_shape(), dev);
  Index idx(g.out_shape(), dev);
  if (y.numel() > 0) {
    max_pool_kernel<<<grid_for(y.numel(), ctx), kThreads, 0, ctx.stream>>>(x.data(), y.data(), idx.data(), g);
    check_launch("max_pool_kernel");
  }
  return {std::move(y), std::move(idx)};
}

CudaTensor<float> max_pool2d_backward(const CudaTensor<float>& x, const CudaTensor<float>& grad,
                                      const Index& indices) {
  const int dev = x.device();
  DeviceContext& ctx = context(dev);
  CudaTensor<float> gx = full<float>(x.shape, 0.0f, dev);
  const int64_t planes = x.shape[0] * x.shape[1], ohw = grad.shape[2] * grad.shape[3];
  if (grad.numel() > 0 && x.numel() > 0) {
    max_pool_backward_kernel<<<grid_for(grad.numel(), ctx), kThreads, 0, ctx.stream>>>(
        grad.data(), indices.data(), gx.data(), planes, ohw, x.shape[2] * x.shape[3]);
    check_launch("max_pool_backward_kernel");
  }
  return gx;
}

CudaTensor<float> avg_pool2d(const CudaTensor<float>& x, const Pool2dOptions& o) {
  const Pool2dGeometry g = pool2d_geometry(x.shape, o);
  const int dev = x.device();
  DeviceContext& ctx = context(dev);
  CudaTensor<float> y(g.out_shape(), dev);
  if (y.numel() > 0) {
    avg_pool_kernel<<<grid_for(y.numel(), ctx), kThreads, 0, ctx.stream>>>(x.data(), y.data(), g);
    check_launch("avg_pool_kernel");
  }
  return y;
}

CudaTensor<float> avg_pool2d_backward(const CudaTensor<float>& x, const CudaTensor<float>& grad,
                                      const Pool2dOptions& o) {
  const int dev = x.device();
  DeviceContext& ctx = context(dev);
  CudaTensor<float> gx(x.shape, dev);
  if (gx.numel() == 0) return gx;
  if (grad.numel() == 0) return full<float>(x.shape, 0.0f, dev);
  avg_pool_backward_kernel<<<grid_for(gx.numel(), ctx), kThreads, 0, ctx.stream>>>(
      grad.data(), gx.data(), pool2d_geometry(x.shape, o, grad.shape[2], grad.shape[3]));
  check_launch("avg_pool_backward_kernel");
  return gx;
}

CudaTensor<float> adaptive_avg_pool2d(const CudaTensor<float>& x, std::array<int64_t, 2> out_hw) {
  const int dev = x.device();
  DeviceContext& ctx = context(dev);
  CudaTensor<float> y(Shape{x.shape[0], x.shape[1], out_hw[0], out_hw[1]}, dev);
  if (y.numel() > 0) {
    adaptive_avg_kernel<<<grid_for(y.numel(), ctx), kThreads, 0, ctx.stream>>>(
        x.data(), y.data(), pool2d_geometry(x.shape, Pool2dOptions{}, out_hw[0], out_hw[1]));
    check_launch("adaptive_avg_kernel");
  }
  return y;
}

CudaTensor<float> adaptive_avg_pool2d_backward(const CudaTensor<float>& x, const CudaTensor<float>& grad) {
  const int dev = x.device();
  DeviceContext& ctx = context(dev);
  CudaTensor<float> gx(x.shape, dev);
  if (gx.numel() == 0) return gx;
  if (grad.numel() == 0) return full<float>(x.shape, 0.0f, dev);
  adaptive_avg_backward_kernel<<<grid_for(gx.numel(), ctx), kThreads, 0, ctx.stream>>>(
      grad.data(), gx.data(), pool2d_geometry(x.shape, Pool2dOptions{}, grad.shape[2], grad.shape[3]));
  check_launch("adaptive_avg_backward_kernel");
  return gx;
}

}  // namespace ember::cuda
