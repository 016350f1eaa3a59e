// Indexing with Int index tensors: gather / scatter_add along a dim, index_select / index_select_add. Index values
// come from user data, so they are validated on the device first (one flag read back) and an out-of-range index
// throws IndexError like on the CPU. Accumulating ops use atomics, so duplicate indices are summed.
#include <string>

#include "backends/cuda/atomics.cuh"
#include "backends/cuda/kernels.hpp"
#include "backends/cuda/runtime.cuh"
#include "backends/cuda/strided.cuh"

namespace ember::cuda {
namespace {

// flag[0] = 1 and flag[1] = an offending value if any index is outside [0, size).
__global__ void index_range_kernel(const int64_t* __restrict__ idx, int64_t n, int64_t size,
                                   unsigned long long* flag) {
  EMBER_CUDA_LOOP(i, n) {
    const int64_t v = idx[i];
    if (v < 0 || v >= size) {
      flag[1] = static_cast<unsigned long long>(v);  // any one of them: the message shows an example
      flag[0] = 1;
    }
  }
}

void check_indices(const char* op, const Index& indices, std::size_t dim, int64_t size) {
  const int64_t n = indices.numel();
  if (n == 0) return;
  DeviceContext& ctx = context(indices.device());
  device_check(
      ctx,
      [&](unsigned long long* flag) {
        index_range_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(indices.data(), n, size, flag);
        check_launch("index_range_kernel");
      },
      [op, dim, size](int64_t bad) {
        throw IndexError(std::string(op) + ": index " + std::to_string(bad) + " out of range for dim " +
                         std::to_string(dim) + " of size " + std::to_string(size));
      });
}

// An index clamped into [0, size): the checks above reject a bad one before eager kernels run, but inside a CUDA
// graph the check is only reported after the replay (graph_capture.hpp), so the kernels must stay in bounds anyway.
__device__ __forceinline__ int64_t in_range(int64_t v, int64_t size) {
  return v < 0 ? 0 : (v >= size ? size - 1 : v);
}

// How gather / scatter_add see x through an index tensor of the same rank: position i of the index tensor reads
// x at map.offset(i) + idx[i] * dim_stride (the map walks the index shape with x's strides, 0 along dim).
struct AlongDim {
  StridedMap<1> map;
  int64_t dim_stride;
  int64_t size;  // x's size along dim
};
AlongDim along_dim(const Shape& x, const Shape& idx, std::size_t dim) {
  std::vector<int64_t> st[1] = {x.strides()};
  const int64_t dim_stride = st[0][dim];
  st[0][dim] = 0;
  return {make_strided_map<1>(idx, st), dim_stride, x[dim]};
}

template <class T>
__global__ void gather_kernel(const T* __restrict__ x, const int64_t* __restrict__ idx, T* __restrict__ out,
                              int64_t n, StridedMap<1> map, int64_t dim_stride, int64_t size) {
  EMBER_CUDA_LOOP(i, n) {
    int64_t off[1];
    map.offsets(i, off);
    out[i] = x[off[0] + in_range(idx[i], size) * dim_stride];
  }
}

template <class T>
__global__ void scatter_add_kernel(T* __restrict__ out, const int64_t* __restrict__ idx, const T* __restrict__ v,
                                   int64_t n, StridedMap<1> map, int64_t dim_stride, int64_t size) {
  EMBER_CUDA_LOOP(i, n) {
    int64_t off[1];
    map.offsets(i, off);
    atomic_accumulate(out + off[0] + in_range(idx[i], size) * dim_stride, v[i]);
  }
}

// out[o, i, k] = x[o, idx[i], k] over out's [outer, m, inner].
template <class T>
__global__ void index_select_kernel(const T* __restrict__ x, const int64_t* __restrict__ idx, T* __restrict__ out,
                                    int64_t n, int64_t m, int64_t inner, int64_t size) {
  EMBER_CUDA_LOOP(i, n) {
    const int64_t k = i % inner, t = i / inner;
    const int64_t o = t / m, j = t % m;
    out[i] = x[(o * size + in_range(idx[j], size)) * inner + k];
  }
}

// out[o, idx[i], k] += v[o, i, k] over v's [outer, m, inner].
template <class T>
__global__ void index_select_add_kernel(T* __restrict__ out, const int64_t* __restrict__ idx, const T* __restrict__ v,
                                        int64_t n, int64_t m, int64_t inner, int64_t size) {
  EMBER_CUDA_LOOP(i, n) {
    const int64_t k = i % inner, t = i / inner;
    const int64_t o = t / m, j = t % m;
    atomic_accumulate(out + (o * size + in_range(idx[j], size)) * inner + k, v[i]);
  }
}

int64_t prod(const std::vector<int64_t>& dims, std::size_t b, std::size_t e) {
  int64_t n = 1;
  for (std::size_t k = b; k < e; ++k) n *= dims[k];
  return n;
}

template <class T>
CudaTensor<T> clone(const CudaTensor<T>& x, DeviceContext& ctx) {
  CudaTensor<T> out(x.shape, x.device());
  if (x.numel() > 0)
    check(cudaMemcpyAsync(out.data(), x.data(), static_cast<std::size_t>(x.numel()) * sizeof(T),
                          cudaMemcpyDeviceToDevice, ctx.stream),
          "cudaMemcpyAsync(clone)");
  return out;
}

}  // namespace

template <class T>
CudaTensor<T> gather(std::size_t dim, const CudaTensor<T>& x, const Index& indices) {
  CudaTensor<T> out(indices.shape, x.device());
  const int64_t n = out.numel();
  if (n == 0) return out;
  check_indices("gather", indices, dim, x.shape[dim]);
  DeviceContext& ctx = context(x.device());
  const AlongDim a = along_dim(x.shape, indices.shape, dim);
  gather_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(x.data(), indices.data(), out.data(), n, a.map,
                                                                a.dim_stride, a.size);
  check_launch("gather_kernel");
  return out;
}

template <class T>
CudaTensor<T> scatter_add(std::size_t dim, const CudaTensor<T>& x, const Index& indices, const CudaTensor<T>& values) {
  DeviceContext& ctx = context(x.device());
  CudaTensor<T> out = clone(x, ctx);
  const int64_t n = indices.numel();
  if (n == 0) return out;
  check_indices("scatter_add", indices, dim, x.shape[dim]);
  const AlongDim a = along_dim(x.shape, indices.shape, dim);
  scatter_add_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(out.data(), indices.data(), values.data(), n,
                                                                     a.map, a.dim_stride, a.size);
  check_launch("scatter_add_kernel");
  return out;
}

template <class T>
CudaTensor<T> index_select(const CudaTensor<T>& x, std::size_t dim, const Index& indices) {
  Shape shape = x.shape;
  const int64_t m = indices.numel();
  shape[dim] = m;
  CudaTensor<T> out(shape, x.device());
  const int64_t n = out.numel();
  if (n == 0) return out;
  const int64_t size = x.shape[dim];
  check_indices("index_select", indices, dim, size);
  DeviceContext& ctx = context(x.device());
  const int64_t inner = prod(x.shape.dims, dim + 1, x.shape.rank());
  index_select_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(x.data(), indices.data(), out.data(), n, m,
                                                                      inner, size);
  check_launch("index_select_kernel");
  return out;
}

template <class T>
CudaTensor<T> index_select_add(const CudaTensor<T>& x, std::size_t dim, const Index& indices,
                               const CudaTensor<T>& values) {
  DeviceContext& ctx = context(x.device());
  CudaTensor<T> out = clone(x, ctx);
  const int64_t n = values.numel();
  if (n == 0) return out;
  const int64_t size = x.shape[dim];
  check_indices("select_assign", indices, dim, size);  // the user-facing name (Tensor::select_assign)
  const int64_t inner = prod(x.shape.dims, dim + 1, x.shape.rank());
  index_select_add_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(out.data(), indices.data(), values.data(),
                                                                          n, indices.numel(), inner, size);
  check_launch("index_select_add_kernel");
  return out;
}

#define EMBER_INDEXING(T)                                                                                        \
  template CudaTensor<T> gather<T>(std::size_t, const CudaTensor<T>&, const Index&);                             \
  template CudaTensor<T> scatter_add<T>(std::size_t, const CudaTensor<T>&, const Index&, const CudaTensor<T>&);  \
  template CudaTensor<T> index_select<T>(const CudaTensor<T>&, std::size_t, const Index&);                       \
  template CudaTensor<T> index_select_add<T>(const CudaTensor<T>&, std::size_t, const Index&, const CudaTensor<T>&);
EMBER_INDEXING(float)
EMBER_INDEXING(int64_t)
EMBER_INDEXING(uint8_t)
#undef EMBER_INDEXING

}  // namespace ember::cuda
