// 2-D convolution as im2col + cuBLAS GEMM, one GEMM per group over the whole batch ([C_out/g, K] x [K, N*Ho*Wo]),
// and its backward: grad_w = grad x col^T, grad_col = w^T x grad, then col2im. col2im gathers (each input pixel
// sums the taps that read it) instead of scattering with atomics, so it is deterministic and needs no zeroing.
#include "backends/cuda/kernels.hpp"
#include "backends/cuda/runtime.cuh"
#include "engine/backend/conv_geometry.hpp"

namespace ember::cuda {
namespace {

using Geom = Conv2dGeometry;

// col[(c*kh + i)*kw + j, (n*ho + oh)*wo + ow] = x[n, c0 + c, oh*sh + i*dh - ph, ow*sw + j*dw - pw] (0 if padded).
__global__ void im2col_kernel(const float* __restrict__ x, float* __restrict__ col, Geom g, int64_t c0) {
  const int64_t l = g.l(), total = g.k() * l;
  EMBER_CUDA_LOOP(idx, total) {
    const int64_t q = idx % l, row = idx / l;
    const int64_t ow = q % g.wo, oh = (q / g.wo) % g.ho, n = q / (g.wo * g.ho);
    const int64_t j = row % g.kw, i = (row / g.kw) % g.kh, c = row / (g.kw * g.kh);
    const int64_t ih = oh * g.sh + i * g.dh - g.ph, iw = ow * g.sw + j * g.dw - g.pw;
    col[idx] = (ih >= 0 && ih < g.h && iw >= 0 && iw < g.w) ? x[((n * g.c + c0 + c) * g.h + ih) * g.w + iw] : 0.0f;
  }
}

// The adjoint of im2col for the group's channels: gx[n, c0 + c, h, w] = sum of col over the taps reading it.
__global__ void col2im_kernel(const float* __restrict__ col, float* __restrict__ gx, Geom g, int64_t c0) {
  const int64_t l = g.l(), total = g.n * g.cg * g.h * g.w;
  EMBER_CUDA_LOOP(idx, total) {
    const int64_t wi = idx % g.w, hi = (idx / g.w) % g.h, c = (idx / (g.w * g.h)) % g.cg, n = idx / (g.w * g.h * g.cg);
    float s = 0.0f;
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t th = hi + g.ph - i * g.dh;  // = oh * sh
      if (th < 0 || th % g.sh) continue;
      const int64_t oh = th / g.sh;
      if (oh >= g.ho) continue;
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t tw = wi + g.pw - j * g.dw;
        if (tw < 0 || tw % g.sw) continue;
        const int64_t ow = tw / g.sw;
        if (ow >= g.wo) continue;
        s += col[((c * g.kh + i) * g.kw + j) * l + (n * g.ho + oh) * g.wo + ow];
      }
    }
    gx[((n * g.c + c0 + c) * g.h + hi) * g.w + wi] = s;
  }
}

// [C_out/g, N, plane] (the GEMM result) -> out[n, co0 + co, plane], plus the bias.
__global__ void gemm_to_nchw_kernel(const float* __restrict__ res, float* __restrict__ out,
                                    const float* __restrict__ bias, int64_t cog, int64_t n, int64_t plane,
                                    int64_t cout, int64_t co0) {
  const int64_t total = cog * n * plane;
  EMBER_CUDA_LOOP(idx, total) {
    const int64_t p = idx % plane, b = (idx / plane) % n, co = idx / (plane * n);
    out[(b * cout + co0 + co) * plane + p] = res[idx] + (bias ? bias[co0 + co] : 0.0f);
  }
}

// grad[n, co0 + co, plane] -> [C_out/g, N * plane], the layout of the forward GEMM's result.
__global__ void nchw_to_gemm_kernel(const float* __restrict__ grad, float* __restrict__ gg, int64_t cog, int64_t n,
                                    int64_t plane, int64_t cout, int64_t co0) {
  const int64_t total = cog * n * plane;
  EMBER_CUDA_LOOP(idx, total) {
    const int64_t p = idx % plane, b = (idx / plane) % n, co = idx / (plane * n);
    gg[idx] = grad[(b * cout + co0 + co) * plane + p];
  }
}

// One block per output channel: the sum of grad over the batch and the plane.
__global__ void bias_grad_kernel(const float* __restrict__ grad, float* __restrict__ gb, int64_t n, int64_t cout,
                                 int64_t plane) {
  __shared__ double partial[kThreads];
  for (int64_t co = blockIdx.x; co < cout; co += gridDim.x) {
    double s = 0.0;
    for (int64_t t = threadIdx.x; t < n * plane; t += blockDim.x) {
      const int64_t b = t / plane, p = t % plane;
      s += grad[(b * cout + co) * plane + p];
    }
    partial[threadIdx.x] = s;
    __syncthreads();
    for (int st = kThreads / 2; st > 0; st >>= 1) {
      if (threadIdx.x < st) partial[threadIdx.x] += partial[threadIdx.x + st];
      __syncthreads();
    }
    if (threadIdx.x == 0) gb[co] = static_cast<float>(partial[0]);
    __syncthreads();
  }
}

float* scratch(std::shared_ptr<Block>& holder, int64_t elems, int device) {
  holder = allocate(static_cast<std::size_t>(elems) * sizeof(float), device);
  return static_cast<float*>(holder->ptr);
}

}  // namespace

CudaTensor<float> conv2d(const CudaTensor<float>& x, const CudaTensor<float>& w, const CudaTensor<float>* bias,
                         const Conv2dOptions& o) {
  const Geom g = conv2d_geometry(x.shape, w.shape, o);
  const int64_t cout = w.shape[0], cog = cout / o.groups, k = g.k(), l = g.l(), plane = g.ho * g.wo;
  const int dev = x.device();
  DeviceContext& ctx = context(dev);
  CudaTensor<float> out(Shape{g.n, cout, g.ho, g.wo}, dev);
  if (out.numel() == 0) return out;
  std::shared_ptr<Block> col_buf, res_buf;  // scratch, returned to the cache in stream order
  float* col = scratch(col_buf, k * l, dev);
  float* res = scratch(res_buf, cog * l, dev);
  for (int64_t grp = 0; grp < o.groups; ++grp) {
    if (k > 0) {
      im2col_kernel<<<grid_for(k * l, ctx), kThreads, 0, ctx.stream>>>(x.data(), col, g, grp * g.cg);
      check_launch("im2col_kernel");
      gemm_rm(ctx, false, false, cog, l, k, 1.0f, w.data() + grp * cog * k, k, 0, col, l, 0, 0.0f, res, l, 0, 1);
    } else {
      check(cudaMemsetAsync(res, 0, static_cast<std::size_t>(cog * l) * sizeof(float), ctx.stream), "cudaMemsetAsync");
    }
    gemm_to_nchw_kernel<<<grid_for(cog * l, ctx), kThreads, 0, ctx.stream>>>(
        res, out.data(), bias ? bias->data() : nullptr, cog, g.n, plane, cout, grp * cog);
    check_launch("gemm_to_nchw_kernel");
  }
  return out;
}

Conv2dGrads<CudaTensor<float>> conv2d_backward(const CudaTensor<float>& x, const CudaTensor<float>& w,
                                               const CudaTensor<float>& grad, bool has_bias, const Conv2dOptions& o) {
  const Geom g = conv2d_geometry(x.shape, w.shape, o);
  const int64_t cout = w.shape[0], cog = cout / o.groups, k = g.k(), l = g.l(), plane = g.ho * g.wo;
  const int dev = x.device();
  DeviceContext& ctx = context(dev);
  CudaTensor<float> gx = full<float>(x.shape, 0.0f, dev);  // zero: channels no output reads keep grad 0
  CudaTensor<float> gw = full<float>(w.shape, 0.0f, dev);
  std::optional<CudaTensor<float>> gb;
  if (has_bias) gb = full<float>(Shape{cout}, 0.0f, dev);
  if (grad.numel() == 0 || k == 0) return {std::move(gx), std::move(gw), std::move(gb)};

  std::shared_ptr<Block> col_buf, gg_buf;
  float* col = scratch(col_buf, k * l, dev);
  float* gg = scratch(gg_buf, cog * l, dev);
  for (int64_t grp = 0; grp < o.groups; ++grp) {
    nchw_to_gemm_kernel<<<grid_for(cog * l, ctx), kThreads, 0, ctx.stream>>>(grad.data(), gg, cog, g.n, plane, cout,
                                                                             grp * cog);
    check_launch("nchw_to_gemm_kernel");
    im2col_kernel<<<grid_for(k * l, ctx), kThreads, 0, ctx.stream>>>(x.data(), col, g, grp * g.cg);
    check_launch("im2col_kernel");
    // grad_w_g = grad_g x col^T.
    gemm_rm(ctx, false, true, cog, k, l, 1.0f, gg, l, 0, col, l, 0, 0.0f, gw.data() + grp * cog * k, k, 0, 1);
    // grad_col = w_g^T x grad_g, reusing the column buffer (stream order: after the GEMM above has read it).
    gemm_rm(ctx, true, false, k, l, cog, 1.0f, w.data() + grp * cog * k, k, 0, gg, l, 0, 0.0f, col, l, 0, 1);
    const int64_t pixels = g.n * g.cg * g.h * g.w;
    col2im_kernel<<<grid_for(pixels, ctx), kThreads, 0, ctx.stream>>>(col, gx.data(), g, grp * g.cg);
    check_launch("col2im_kernel");
  }
  if (has_bias) {
    bias_grad_kernel<<<static_cast<unsigned>(cout < 65535 ? cout : 65535), kThreads, 0, ctx.stream>>>(
        grad.data(), gb->data(), g.n, cout, plane);
    check_launch("bias_grad_kernel");
  }
  return {std::move(gx), std::move(gw), std::move(gb)};
}

}  // namespace ember::cuda
