// Reductions over one dim (keepdim) or over all elements, and argmax/argmin, for Float and Int tensors.
// A reduction over `dim` views the tensor as [outer, len, inner]: with inner == 1 one block reduces each
// contiguous row; otherwise one thread walks each column (reads coalesce across the inner dim). reduce_all runs
// two passes (per-block partials, then one block). Float sums accumulate in double, like the CPU backend's wide
// accumulator; max/min let NaN win and argmax/argmin count NaN as the extreme, first occurrence winning.
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cuda/int_math.cuh"
#include "backends/cuda/kernels.hpp"
#include "backends/cuda/runtime.cuh"
#include "engine/backend/reduce_geometry.hpp"

namespace ember::cuda {
namespace {

template <class T, ReduceOp Op>
struct Reducer {
  static constexpr bool kFloat = std::is_same_v<T, float>;
  static constexpr bool kSum = Op == ReduceOp::Sum || Op == ReduceOp::Mean;
  using Acc = std::conditional_t<kSum && kFloat, double, T>;

  __device__ static Acc identity() {
    if constexpr (kSum) return Acc(0);
    else if constexpr (Op == ReduceOp::Prod) return Acc(1);
    else if constexpr (kFloat) return Op == ReduceOp::Max ? Acc(-INFINITY) : Acc(INFINITY);
    else return Op == ReduceOp::Max ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  }
  __device__ static Acc combine(Acc a, Acc b) {
    if constexpr (kSum) {
      if constexpr (kFloat) return a + b;
      else return wrap_add(a, b);
    } else if constexpr (Op == ReduceOp::Prod) {
      if constexpr (kFloat) return a * b;
      else return wrap_mul(a, b);
    } else if constexpr (Op == ReduceOp::Max) {
      return (b > a || b != b) ? b : a;  // NaN is sticky
    } else {
      return (b < a || b != b) ? b : a;
    }
  }
  __device__ static T finish(Acc a, int64_t count) {
    if constexpr (Op == ReduceOp::Mean) {
      if (count == 0) return kFloat ? T(NAN) : T(0);
      if constexpr (kFloat) return static_cast<T>(a / static_cast<double>(count));
      else return a / count;
    } else {
      return static_cast<T>(a);
    }
  }
};

// Tree reduction of one value per thread in a block of kThreads; the result is valid in thread 0.
template <class R, class Acc>
__device__ Acc block_reduce(Acc v) {
  __shared__ Acc shared[kThreads];
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] = R::combine(shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  return shared[0];
}

// One block per contiguous row of `len` elements (inner == 1).
template <class T, ReduceOp Op>
__global__ void reduce_rows_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t len,
                                   int64_t count) {
  using R = Reducer<T, Op>;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    typename R::Acc acc = R::identity();
    const T* p = x + row * len;
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x) acc = R::combine(acc, static_cast<typename R::Acc>(p[j]));
    acc = block_reduce<R>(acc);
    if (threadIdx.x == 0) y[row] = R::finish(acc, count);
    __syncthreads();  // shared memory is reused by the next row
  }
}

// One thread per (outer, inner) column (inner > 1).
template <class T, ReduceOp Op>
__global__ void reduce_columns_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t outer, int64_t len,
                                      int64_t inner) {
  using R = Reducer<T, Op>;
  EMBER_CUDA_LOOP(i, outer * inner) {
    const int64_t o = i / inner, j = i % inner;
    const T* p = x + o * len * inner + j;
    typename R::Acc acc = R::identity();
    for (int64_t r = 0; r < len; ++r) acc = R::combine(acc, static_cast<typename R::Acc>(p[r * inner]));
    y[i] = R::finish(acc, len);
  }
}

// Pass 1 of reduce_all: each block folds a grid-strided share of x into partials[blockIdx.x].
template <class T, ReduceOp Op>
__global__ void reduce_partials_kernel(const T* __restrict__ x, int64_t n, typename Reducer<T, Op>::Acc* partials) {
  using R = Reducer<T, Op>;
  typename R::Acc acc = R::identity();
  EMBER_CUDA_LOOP(i, n) acc = R::combine(acc, static_cast<typename R::Acc>(x[i]));
  acc = block_reduce<R>(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

// Pass 2: one block folds the partials.
template <class T, ReduceOp Op>
__global__ void reduce_finish_kernel(const typename Reducer<T, Op>::Acc* __restrict__ partials, int count,
                                     T* __restrict__ y, int64_t n) {
  using R = Reducer<T, Op>;
  typename R::Acc acc = R::identity();
  for (int i = threadIdx.x; i < count; i += blockDim.x) acc = R::combine(acc, partials[i]);
  acc = block_reduce<R>(acc);
  if (threadIdx.x == 0) y[0] = R::finish(acc, n);
}

unsigned rows_grid(int64_t rows) { return static_cast<unsigned>(rows < 65535 ? (rows < 1 ? 1 : rows) : 65535); }

template <class T, ReduceOp Op>
CudaTensor<T> reduce_dim(const CudaTensor<T>& x, std::size_t dim) {
  DeviceContext& ctx = context(x.device());
  CudaTensor<T> y(reduced_shape(x.shape, dim), x.device());
  const ReduceView v = reduce_view(x.shape, dim);
  if (y.numel() == 0) return y;
  if (v.inner == 1) {
    reduce_rows_kernel<T, Op><<<rows_grid(v.outer), kThreads, 0, ctx.stream>>>(x.data(), y.data(), v.outer, v.len,
                                                                               v.len);
  } else {
    reduce_columns_kernel<T, Op><<<grid_for(v.outer * v.inner, ctx), kThreads, 0, ctx.stream>>>(
        x.data(), y.data(), v.outer, v.len, v.inner);
  }
  check_launch("reduce_kernel");
  return y;
}

template <class T, ReduceOp Op>
CudaTensor<T> reduce_all_op(const CudaTensor<T>& x) {
  using Acc = typename Reducer<T, Op>::Acc;
  DeviceContext& ctx = context(x.device());
  CudaTensor<T> y(Shape{1}, x.device());
  const int64_t n = x.numel();
  const unsigned blocks = grid_for(n, ctx);
  auto partials = allocate(blocks * sizeof(Acc), x.device());  // returned to the cache in stream order
  reduce_partials_kernel<T, Op><<<blocks, kThreads, 0, ctx.stream>>>(x.data(), n, static_cast<Acc*>(partials->ptr));
  check_launch("reduce_partials_kernel");
  reduce_finish_kernel<T, Op><<<1, kThreads, 0, ctx.stream>>>(static_cast<const Acc*>(partials->ptr),
                                                                static_cast<int>(blocks), y.data(), n);
  check_launch("reduce_finish_kernel");
  return y;
}

// ---- arg reductions

// Whether candidate c beats the current best b (strictly): NaN beats everything but an earlier NaN.
template <class T>
__device__ __forceinline__ bool better(T c, T b, bool want_max) {
  if constexpr (std::is_same_v<T, float>) {
    if (b != b) return false;
    if (c != c) return true;
  }
  return want_max ? c > b : c < b;
}

template <class T>
__global__ void arg_columns_kernel(const T* __restrict__ x, int64_t* __restrict__ y, int64_t outer, int64_t len,
                                   int64_t inner, bool want_max) {
  EMBER_CUDA_LOOP(i, outer * inner) {
    const int64_t o = i / inner, j = i % inner;
    const T* p = x + o * len * inner + j;
    int64_t bi = 0;
    T best = p[0];
    for (int64_t r = 1; r < len; ++r) {
      const T c = p[r * inner];
      if (better(c, best, want_max)) {
        best = c;
        bi = r;
      }
    }
    y[i] = bi;
  }
}

// One block per contiguous row: each thread scans its strided share (first occurrence kept), then the block
// merges (value, index) pairs, breaking ties by the smaller index so the first occurrence wins overall.
template <class T>
__global__ void arg_rows_kernel(const T* __restrict__ x, int64_t* __restrict__ y, int64_t rows, int64_t len,
                                bool want_max) {
  __shared__ T vals[kThreads];
  __shared__ int64_t idxs[kThreads];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* p = x + row * len;
    int64_t bi = -1;
    T best = T(0);
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x) {
      if (bi < 0 || better(p[j], best, want_max)) {
        best = p[j];
        bi = j;
      }
    }
    vals[threadIdx.x] = best;
    idxs[threadIdx.x] = bi;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) {
        const int64_t ia = idxs[threadIdx.x], ib = idxs[threadIdx.x + s];
        const T va = vals[threadIdx.x], vb = vals[threadIdx.x + s];
        bool take_b = false;
        if (ib >= 0) {
          if (ia < 0) take_b = true;
          else if (better(vb, va, want_max)) take_b = true;
          else if (!better(va, vb, want_max)) take_b = ib < ia;  // equal (or both NaN): the earlier one
        }
        if (take_b) {
          vals[threadIdx.x] = vb;
          idxs[threadIdx.x] = ib;
        }
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) y[row] = idxs[0] < 0 ? 0 : idxs[0];
    __syncthreads();
  }
}

}  // namespace

template <class T>
CudaTensor<T> reduce(const CudaTensor<T>& x, ReduceOp op, std::size_t dim) {
  switch (op) {
    case ReduceOp::Sum: return reduce_dim<T, ReduceOp::Sum>(x, dim);
    case ReduceOp::Mean: return reduce_dim<T, ReduceOp::Mean>(x, dim);
    case ReduceOp::Prod: return reduce_dim<T, ReduceOp::Prod>(x, dim);
    case ReduceOp::Max: return reduce_dim<T, ReduceOp::Max>(x, dim);
    case ReduceOp::Min: return reduce_dim<T, ReduceOp::Min>(x, dim);
  }
  throw ArgumentError("reduce: unknown op");
}

template <class T>
CudaTensor<T> reduce_all(const CudaTensor<T>& x, ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return reduce_all_op<T, ReduceOp::Sum>(x);
    case ReduceOp::Mean: return reduce_all_op<T, ReduceOp::Mean>(x);
    case ReduceOp::Prod: return reduce_all_op<T, ReduceOp::Prod>(x);
    case ReduceOp::Max: return reduce_all_op<T, ReduceOp::Max>(x);
    case ReduceOp::Min: return reduce_all_op<T, ReduceOp::Min>(x);
  }
  throw ArgumentError("reduce_all: unknown op");
}

template <class T>
Index arg_reduce(const CudaTensor<T>& x, ArgReduceOp op, std::size_t dim) {
  DeviceContext& ctx = context(x.device());
  Index y(reduced_shape(x.shape, dim), x.device());
  const ReduceView v = reduce_view(x.shape, dim);
  if (y.numel() == 0 || v.len == 0) return y;
  const bool want_max = op == ArgReduceOp::ArgMax;
  if (v.inner == 1) {
    arg_rows_kernel<T><<<rows_grid(v.outer), kThreads, 0, ctx.stream>>>(x.data(), y.data(), v.outer, v.len,
                                                                         want_max);
  } else {
    arg_columns_kernel<T><<<grid_for(v.outer * v.inner, ctx), kThreads, 0, ctx.stream>>>(
        x.data(), y.data(), v.outer, v.len, v.inner, want_max);
  }
  check_launch("arg_reduce_kernel");
  return y;
}

#define EMBER_INSTANTIATE(T)                                                      \
  template CudaTensor<T> reduce<T>(const CudaTensor<T>&, ReduceOp, std::size_t); \
  template CudaTensor<T> reduce_all<T>(const CudaTensor<T>&, ReduceOp);          \
  template Index arg_reduce<T>(const CudaTensor<T>&, ArgReduceOp, std::size_t);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(int64_t)
#undef EMBER_INSTANTIATE

}  // namespace ember::cuda
