#pragma once
// Elementwise launch helpers shared by the elementwise, compare and fused kernels: y[i] = f(x[i]) and
// y[i] = f(a[i], b[i]) over contiguous tensors, with NumPy broadcasting through StridedMap when shapes differ.
// f32 -> f32 maps over same-shape operands read and write float4 (16-byte) vectors: buffers start 256-byte
// aligned and tensors never start mid-buffer, so the vector loads are always aligned.
#include <type_traits>

#include "backends/cuda/cuda_tensor.hpp"
#include "backends/cuda/runtime.cuh"
#include "backends/cuda/strided.cuh"

namespace ember::cuda {

template <class In, class Out, class F>
__global__ void map1_kernel(const In* __restrict__ x, Out* __restrict__ y, int64_t n, F f) {
  EMBER_CUDA_LOOP(i, n) y[i] = f(x[i]);
}

template <class F>
__global__ void map1_f4_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n, F f) {
  const int64_t n4 = n / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* y4 = reinterpret_cast<float4*>(y);
  EMBER_CUDA_LOOP(i, n4) {
    float4 v = x4[i];
    v.x = f(v.x), v.y = f(v.y), v.z = f(v.z), v.w = f(v.w);
    y4[i] = v;
  }
  EMBER_CUDA_LOOP(i, n - n4 * 4) y[n4 * 4 + i] = f(x[n4 * 4 + i]);
}

template <class In, class Out, class F>
__global__ void map2_kernel(const In* __restrict__ a, const In* __restrict__ b, Out* __restrict__ y, int64_t n, F f) {
  EMBER_CUDA_LOOP(i, n) y[i] = f(a[i], b[i]);
}

template <class F>
__global__ void map2_f4_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ y,
                               int64_t n, F f) {
  const int64_t n4 = n / 4;
  const float4* a4 = reinterpret_cast<const float4*>(a);
  const float4* b4 = reinterpret_cast<const float4*>(b);
  float4* y4 = reinterpret_cast<float4*>(y);
  EMBER_CUDA_LOOP(i, n4) {
    const float4 u = a4[i], v = b4[i];
    y4[i] = make_float4(f(u.x, v.x), f(u.y, v.y), f(u.z, v.z), f(u.w, v.w));
  }
  EMBER_CUDA_LOOP(i, n - n4 * 4) y[n4 * 4 + i] = f(a[n4 * 4 + i], b[n4 * 4 + i]);
}

template <class In, class Out, class F>
__global__ void map2_broadcast_kernel(const In* __restrict__ a, const In* __restrict__ b, Out* __restrict__ y,
                                      int64_t n, StridedMap<2> map, F f) {
  EMBER_CUDA_LOOP(i, n) {
    int64_t off[2];
    map.offsets(i, off);
    y[i] = f(a[off[0]], b[off[1]]);
  }
}

// y = f(x) elementwise, same shape.
template <class Out, class In, class F>
CudaTensor<Out> map1(const CudaTensor<In>& x, F f) {
  DeviceContext& ctx = context(x.device());
  CudaTensor<Out> y(x.shape, x.device());
  const int64_t n = x.numel();
  if (n == 0) return y;
  if constexpr (std::is_same_v<In, float> && std::is_same_v<Out, float>) {
    map1_f4_kernel<<<grid_for(n / 4 + 1, ctx), kThreads, 0, ctx.stream>>>(x.data(), y.data(), n, f);
  } else {
    map1_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(x.data(), y.data(), n, f);
  }
  check_launch("map1_kernel");
  return y;
}

// y = f(a, b) elementwise with NumPy broadcasting; `op` names the op in shape errors.
template <class Out, class In, class F>
CudaTensor<Out> map2(const CudaTensor<In>& a, const CudaTensor<In>& b, F f, const char* op) {
  const bool same = a.shape == b.shape;
  const Shape shape = same ? a.shape : broadcast_shapes(op, a.shape, b.shape);
  DeviceContext& ctx = context(a.device());
  CudaTensor<Out> y(shape, a.device());
  const int64_t n = y.numel();
  if (n == 0) return y;
  if (same) {
    if constexpr (std::is_same_v<In, float> && std::is_same_v<Out, float>) {
      map2_f4_kernel<<<grid_for(n / 4 + 1, ctx), kThreads, 0, ctx.stream>>>(a.data(), b.data(), y.data(), n, f);
    } else {
      map2_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(a.data(), b.data(), y.data(), n, f);
    }
  } else {
    const std::vector<int64_t> st[2] = {broadcast_strides(a.shape, shape), broadcast_strides(b.shape, shape)};
    const StridedMap<2> map = make_strided_map<2>(shape, st);
    map2_broadcast_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(a.data(), b.data(), y.data(), n, map, f);
  }
  check_launch("map2_kernel");
  return y;
}

}  // namespace ember::cuda
