// argsort and cumsum along one dim (issue 13), as backends/cpu/sort_scan.cpp and the Vulkan shaders (sort.comp,
// cumsum.comp): x is viewed as [outer, len, inner] and one block owns one line x[o, :, j].
//
// argsort is a bitonic network over len rounded up to a power of two, in the form where every compare-exchange
// puts the smaller element first (each stage starts by comparing i with its mirror in the block), so the padding
// behaves as values larger than any and is never touched: pairs reaching past len are skipped. The order is total
// (NaN largest, then the original position), so the result equals the CPU's stable sort. Lines up to kSharedLen
// sort in shared memory; longer ones in a scratch buffer, one region per line (__syncthreads makes a block's global
// writes visible to the block). cumsum scans each line in chunks of the block size (Hillis-Steele in shared
// memory) plus the carry of the chunks before.
#include <bit>
#include <cmath>

#include "backends/cuda/kernels.hpp"
#include "backends/cuda/runtime.cuh"
#include "engine/backend/reduce_geometry.hpp"

namespace ember::cuda {
namespace {

constexpr int64_t kSharedLen = 2048;

unsigned line_grid(int64_t lines) { return static_cast<unsigned>(lines < 65535 ? (lines < 1 ? 1 : lines) : 65535); }

// NaN is larger than every number; two NaNs are equivalent.
__device__ bool less_nan_last(float a, float b) { return !isnan(a) && (isnan(b) || a < b); }

__device__ bool before(float ka, int64_t ia, float kb, int64_t ib, bool descending) {
  const bool ab = descending ? less_nan_last(kb, ka) : less_nan_last(ka, kb);
  const bool ba = descending ? less_nan_last(ka, kb) : less_nan_last(kb, ka);
  return ab || (!ba && ia < ib);
}

// The whole network over keys/pos[0, len) (shared or global memory), by the block's threads.
__device__ void bitonic_line(float* keys, int64_t* pos, int64_t len, int64_t npad, bool descending) {
  auto cmpx = [&](int64_t a, int64_t b) {
    if (b >= len) return;  // padding: larger than anything, already in place
    const float ka = keys[a], kb = keys[b];
    const int64_t ia = pos[a], ib = pos[b];
    if (before(kb, ib, ka, ia, descending)) {
      keys[a] = kb;
      keys[b] = ka;
      pos[a] = ib;
      pos[b] = ia;
    }
  };
  const int64_t half = npad / 2;
  for (int64_t k = 2; k <= npad; k <<= 1) {
    const int64_t hk = k / 2;
    for (int64_t t = threadIdx.x; t < half; t += blockDim.x) {
      const int64_t block = t / hk, off = t % hk;
      cmpx(block * k + off, block * k + k - 1 - off);
    }
    __syncthreads();
    for (int64_t s = hk / 2; s >= 1; s >>= 1) {
      for (int64_t t = threadIdx.x; t < half; t += blockDim.x) {
        const int64_t a = (t / s) * 2 * s + t % s;
        cmpx(a, a + s);
      }
      __syncthreads();
    }
  }
}

// scratch_keys / scratch_pos: null for lines that fit shared memory, else lines * len elements each.
__global__ void argsort_kernel(const float* x, int64_t* y, int64_t outer, int64_t len, int64_t inner, int64_t npad,
                               bool descending, float* scratch_keys, int64_t* scratch_pos) {
  __shared__ float shared_keys[kSharedLen];
  __shared__ int64_t shared_pos[kSharedLen];
  for (int64_t line = blockIdx.x; line < outer * inner; line += gridDim.x) {
    const int64_t o = line / inner, j = line % inner;
    const int64_t at = o * len * inner + j;
    float* keys = scratch_keys ? scratch_keys + line * len : shared_keys;
    int64_t* pos = scratch_pos ? scratch_pos + line * len : shared_pos;
    for (int64_t r = threadIdx.x; r < len; r += blockDim.x) {
      keys[r] = x[at + r * inner];
      pos[r] = r;
    }
    __syncthreads();
    bitonic_line(keys, pos, len, npad, descending);
    for (int64_t r = threadIdx.x; r < len; r += blockDim.x) y[at + r * inner] = pos[r];
    __syncthreads();  // the next line reuses the shared arrays
  }
}

__global__ void cumsum_kernel(const float* x, float* y, int64_t outer, int64_t len, int64_t inner) {
  __shared__ float part[kThreads];
  const int lid = threadIdx.x;
  for (int64_t line = blockIdx.x; line < outer * inner; line += gridDim.x) {
    const int64_t o = line / inner, j = line % inner;
    const int64_t at = o * len * inner + j;
    float carry = 0.0f;
    for (int64_t c = 0; c < len; c += kThreads) {
      const int64_t r = c + lid;
      part[lid] = r < len ? x[at + r * inner] : 0.0f;
      __syncthreads();
      for (int s = 1; s < kThreads; s <<= 1) {
        const float add = lid >= s ? part[lid - s] : 0.0f;
        __syncthreads();
        part[lid] += add;
        __syncthreads();
      }
      if (r < len) y[at + r * inner] = carry + part[lid];
      carry += part[kThreads - 1];
      __syncthreads();  // every thread has read part[kThreads - 1] before the next chunk overwrites it
    }
  }
}

}  // namespace

Index argsort(const CudaTensor<float>& x, std::size_t dim, bool descending) {
  DeviceContext& ctx = context(x.device());
  Index y(x.shape, x.device());
  if (y.numel() == 0) return y;
  const ReduceView v = reduce_view(x.shape, dim);
  const auto npad = static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(v.len)));
  if (v.len <= kSharedLen) {
    argsort_kernel<<<line_grid(v.outputs()), kThreads, 0, ctx.stream>>>(x.data(), y.data(), v.outer, v.len, v.inner,
                                                                        npad, descending, nullptr, nullptr);
    check_launch("argsort_kernel");
    return y;
  }
  CudaTensor<float> keys(Shape{v.outputs() * v.len}, x.device());
  Index pos(Shape{v.outputs() * v.len}, x.device());
  argsort_kernel<<<line_grid(v.outputs()), kThreads, 0, ctx.stream>>>(x.data(), y.data(), v.outer, v.len, v.inner,
                                                                      npad, descending, keys.data(), pos.data());
  check_launch("argsort_kernel");
  return y;
}

CudaTensor<float> cumsum(const CudaTensor<float>& x, std::size_t dim) {
  DeviceContext& ctx = context(x.device());
  CudaTensor<float> y(x.shape, x.device());
  if (y.numel() == 0) return y;
  const ReduceView v = reduce_view(x.shape, dim);
  cumsum_kernel<<<line_grid(v.outputs()), kThreads, 0, ctx.stream>>>(x.data(), y.data(), v.outer, v.len, v.inner);
  check_launch("cumsum_kernel");
  return y;
}

}  // namespace ember::cuda
