// Creation, host transfer and layout ops: from_data/into_data, full, arange, reshape/permute/expand, slice,
// slice_assign, cat, flip, where, mask_fill and casts. Every output is contiguous row-major; strided reads and
// writes go through StridedMap, which merges dims that stay contiguous.
#include <cuda_fp16.h>

#include <type_traits>

#include "backends/cuda/kernels.hpp"
#include "backends/cuda/runtime.cuh"
#include "backends/cuda/strided.cuh"
#include "engine/backend/strided_view.hpp"

namespace ember::cuda {
namespace {

// dst[i] = src[offset(i)]: gathers a strided view into contiguous memory.
template <class T>
__global__ void strided_read_kernel(const T* __restrict__ src, T* __restrict__ dst, int64_t n, StridedMap<1> map) {
  EMBER_CUDA_LOOP(i, n) {
    int64_t off[1];
    map.offsets(i, off);
    dst[i] = src[off[0]];
  }
}

// dst[offset(i)] = src[i]: writes contiguous values into a strided region (offsets are distinct).
template <class T>
__global__ void strided_write_kernel(const T* __restrict__ src, T* __restrict__ dst, int64_t n, StridedMap<1> map) {
  EMBER_CUDA_LOOP(i, n) {
    int64_t off[1];
    map.offsets(i, off);
    dst[off[0]] = src[i];
  }
}

template <class T>
__global__ void fill_kernel(T* __restrict__ dst, int64_t n, T value) {
  EMBER_CUDA_LOOP(i, n) dst[i] = value;
}

// A Bernoulli tensor from its counter-based words (engine/tensor/philox.hpp, random.hpp's fill_bernoulli: the same
// values bit for bit, integer arithmetic only): element i is `hit` where word i of the Philox4x32-10 stream keyed by
// (k0, k1) is below threshold (every word when all_hit: a threshold of 2^32). One block of four words per item.
// Inside a CUDA graph the key changes per replay: it is read from the graph's per-step words (graph_capture.hpp).
__global__ void bernoulli_kernel(float* __restrict__ dst, int64_t n, uint32_t key0, uint32_t key1,
                                 const uint32_t* in_graph, uint32_t threshold, bool all_hit, float hit) {
  const uint32_t k0 = in_graph ? in_graph[0] : key0, k1 = in_graph ? in_graph[1] : key1;
  const int64_t blocks = (n + 3) / 4;
  EMBER_CUDA_LOOP(b, blocks) {
    uint32_t c0 = static_cast<uint32_t>(b), c1 = static_cast<uint32_t>(static_cast<uint64_t>(b) >> 32), c2 = 0, c3 = 0;
    uint32_t a = k0, z = k1;
    for (int r = 0; r < 10; ++r) {  // Random123's philox4x32_R(10, ctr, key)
      const uint32_t hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
      const uint32_t hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
      c0 = hi1 ^ c1 ^ a;
      c1 = lo1;
      c2 = hi0 ^ c3 ^ z;
      c3 = lo0;
      a += 0x9E3779B9u;
      z += 0xBB67AE85u;
    }
    const uint32_t w[4] = {c0, c1, c2, c3};
    for (int j = 0; j < 4; ++j) {
      const int64_t i = 4 * b + j;
      if (i < n) dst[i] = (all_hit || w[j] < threshold) ? hit : 0.0f;
    }
  }
}

__global__ void arange_kernel(int64_t* __restrict__ dst, int64_t n, int64_t start) {
  EMBER_CUDA_LOOP(i, n) dst[i] = start + i;
}

__global__ void bool_normalize_kernel(uint8_t* __restrict__ x, int64_t n) {
  EMBER_CUDA_LOOP(i, n) x[i] = x[i] != 0;
}

__global__ void half_to_float_kernel(const __half* __restrict__ src, float* __restrict__ dst, int64_t n) {
  EMBER_CUDA_LOOP(i, n) dst[i] = __half2float(src[i]);
}

template <class From, class To>
__global__ void cast_kernel(const From* __restrict__ src, To* __restrict__ dst, int64_t n) {
  EMBER_CUDA_LOOP(i, n) {
    if constexpr (std::is_same_v<To, uint8_t>) dst[i] = src[i] != From(0);
    else dst[i] = static_cast<To>(src[i]);
  }
}

template <class T>
__global__ void where_kernel(const uint8_t* __restrict__ c, const T* __restrict__ a, const T* __restrict__ b,
                             T* __restrict__ y, int64_t n, StridedMap<3> map) {
  EMBER_CUDA_LOOP(i, n) {
    int64_t off[3];
    map.offsets(i, off);
    y[i] = c[off[0]] ? a[off[1]] : b[off[2]];
  }
}

template <class T>
__global__ void mask_fill_kernel(const uint8_t* __restrict__ m, const T* __restrict__ x, T* __restrict__ y, int64_t n,
                                 StridedMap<1> map, T value) {
  EMBER_CUDA_LOOP(i, n) {
    int64_t off[1];
    map.offsets(i, off);
    y[i] = m[off[0]] ? value : x[i];
  }
}

// Contiguous `shape` read from `src` with element `strides` (any sign, 0 for broadcast).
template <class T>
CudaTensor<T> read_strided(const T* src, std::vector<int64_t> strides, const Shape& shape, int device) {
  DeviceContext& ctx = context(device);
  CudaTensor<T> out(shape, device);
  const int64_t n = out.numel();
  if (n == 0) return out;
  const std::vector<int64_t> st[1] = {std::move(strides)};
  const StridedMap<1> map = make_strided_map<1>(shape, st);
  strided_read_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(src, out.data(), n, map);
  check_launch("strided_read_kernel");
  return out;
}

// Writes contiguous `values` (shape vs) into dst with element `strides` (one per dim of vs).
template <class T>
void write_strided(const CudaTensor<T>& values, std::vector<int64_t> strides, T* dst) {
  const int64_t n = values.numel();
  if (n == 0) return;
  DeviceContext& ctx = context(values.device());
  const std::vector<int64_t> st[1] = {std::move(strides)};
  const StridedMap<1> map = make_strided_map<1>(values.shape, st);
  strided_write_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(values.data(), dst, n, map);
  check_launch("strided_write_kernel");
}

template <class T>
CudaTensor<T> clone(const CudaTensor<T>& x) {
  DeviceContext& ctx = context(x.device());
  CudaTensor<T> out(x.shape, x.device());
  if (x.numel() > 0)
    check(cudaMemcpyAsync(out.data(), x.data(), static_cast<std::size_t>(x.numel()) * sizeof(T),
                          cudaMemcpyDeviceToDevice, ctx.stream),
          "cudaMemcpyAsync(clone)");
  return out;
}

void upload(void* dst, const void* src, std::size_t bytes, DeviceContext& ctx) {
  refuse_in_capture(ctx, "an upload of host values (a graph would repeat them: a random draw other than a "
                         "Bernoulli mask, or a tensor made from host data inside the step)");
  // From pageable memory the call returns once the source is staged, so `src` may be freed right after.
  if (bytes > 0) check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, ctx.stream), "cudaMemcpyAsync(H2D)");
}

}  // namespace

template <class T>
CudaTensor<T> from_data(const TensorData& data, DType own, int device) {
  DeviceContext& ctx = context(device);
  CudaTensor<T> out(data.shape, device);
  const int64_t n = out.numel();
  if (n == 0) return out;
  if (data.dtype == own && dtype_size(own) == sizeof(T)) {
    upload(out.data(), data.bytes.data(), data.bytes.size(), ctx);
    if (own == DType::Bool) {  // host bytes may hold any nonzero for true; kernels rely on 0/1
      bool_normalize_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(reinterpret_cast<uint8_t*>(out.data()), n);
      check_launch("bool_normalize_kernel");
    }
  } else if constexpr (std::is_same_v<T, float>) {
    if (data.dtype == DType::F16) {  // half storage: upload 2 bytes per element, widen on the device
      auto staged = allocate(data.bytes.size(), device);
      upload(staged->ptr, data.bytes.data(), data.bytes.size(), ctx);
      half_to_float_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(static_cast<const __half*>(staged->ptr),
                                                                          out.data(), n);
      check_launch("half_to_float_kernel");
    } else {
      const TensorData converted = data.convert(own);  // other dtypes are converted while still on the host
      upload(out.data(), converted.bytes.data(), converted.bytes.size(), ctx);
    }
  } else {
    const TensorData converted = data.convert(own);
    upload(out.data(), converted.bytes.data(), converted.bytes.size(), ctx);
  }
  return out;
}

template <class T>
TensorData into_data(const CudaTensor<T>& x, DType own) {
  std::vector<std::byte> bytes(static_cast<std::size_t>(x.numel()) * sizeof(T));
  if (!bytes.empty()) {
    DeviceContext& ctx = context(x.device());
    refuse_in_capture(ctx, "a read back to the host");
    check(cudaMemcpyAsync(bytes.data(), x.data(), bytes.size(), cudaMemcpyDeviceToHost, ctx.stream),
          "cudaMemcpyAsync(D2H)");
    check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize(into_data)");
  }
  return TensorData(std::move(bytes), x.shape, own);
}

template <class T>
CudaTensor<T> to_device(const CudaTensor<T>& x, int device) {
  if (x.device() == device) return x;
  refuse_in_capture(context(device), "a copy from another device");
  DeviceContext& src = context(x.device());
  refuse_in_capture(src, "a copy to another device");
  check(cudaStreamSynchronize(src.stream), "cudaStreamSynchronize(to_device source)");
  DeviceContext& dst = context(device);
  CudaTensor<T> out(x.shape, device);
  if (x.numel() > 0)
    check(cudaMemcpyPeerAsync(out.data(), device, x.data(), x.device(),
                              static_cast<std::size_t>(x.numel()) * sizeof(T), dst.stream),
          "cudaMemcpyPeerAsync");
  return out;
}

template <class T>
CudaTensor<T> full(const Shape& shape, T value, int device) {
  DeviceContext& ctx = context(device);
  CudaTensor<T> out(shape, device);
  const int64_t n = out.numel();
  if (n == 0) return out;
  fill_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(out.data(), n, value);
  check_launch("fill_kernel");
  return out;
}

CudaTensor<float> bernoulli(const Shape& shape, uint64_t key, uint64_t threshold, float hit, int device) {
  DeviceContext& ctx = context(device);
  CudaTensor<float> out(shape, device);
  const uint32_t key_words[2] = {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)};
  // One per-step block per mask, even an empty one (a graph's replay writes one key per draw).
  GraphCapture* graph = capturing(ctx);
  const auto* in_graph = graph ? static_cast<const uint32_t*>(graph->step_words(sizeof key_words)) : nullptr;
  const int64_t n = out.numel();
  if (n == 0) return out;
  bernoulli_kernel<<<grid_for((n + 3) / 4, ctx), kThreads, 0, ctx.stream>>>(
      out.data(), n, key_words[0], key_words[1], in_graph, static_cast<uint32_t>(threshold), threshold >> 32 != 0,
      hit);
  check_launch("bernoulli_kernel");
  return out;
}

Index arange(int64_t start, int64_t end, int device) {
  DeviceContext& ctx = context(device);
  Index out(Shape{end > start ? end - start : 0}, device);
  const int64_t n = out.numel();
  if (n == 0) return out;
  arange_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(out.data(), n, start);
  check_launch("arange_kernel");
  return out;
}

template <class T>
CudaTensor<T> reshape(const CudaTensor<T>& x, const Shape& shape) {
  return CudaTensor<T>(x.buffer, shape);  // contiguous, so a new shape over the same buffer
}

template <class T>
CudaTensor<T> permute(const CudaTensor<T>& x, const std::vector<std::size_t>& axes) {
  StridedView v = permuted_view(x.shape, axes);
  // If the dims of size > 1 keep their order, the memory order is unchanged: share the buffer.
  if (permute_keeps_memory_order(x.shape, axes) || x.numel() == 0) return CudaTensor<T>(x.buffer, v.shape);
  return read_strided(x.data(), std::move(v.strides), v.shape, x.device());
}

template <class T>
CudaTensor<T> expand(const CudaTensor<T>& x, const Shape& shape) {
  // Broadcasting only repeats, so equal counts mean nothing repeats (only leading or unit dims are added).
  if (shape.num_elements() == x.numel()) return CudaTensor<T>(x.buffer, shape);
  return read_strided(x.data(), expanded_view(x.shape, shape).strides, shape, x.device());
}

template <class T>
CudaTensor<T> slice(const CudaTensor<T>& x, const std::vector<Range>& ranges) {
  StridedView v = sliced_view(x.shape, ranges);
  if (v.shape == x.shape) return x;
  if (v.shape.num_elements() == 0) return CudaTensor<T>(v.shape, x.device());
  return read_strided(x.data() + v.offset, std::move(v.strides), v.shape, x.device());
}

template <class T>
CudaTensor<T> slice_assign(const CudaTensor<T>& x, const std::vector<Range>& ranges, const CudaTensor<T>& values) {
  CudaTensor<T> out = clone(x);
  if (values.numel() == 0) return out;
  StridedView region = sliced_view(x.shape, ranges);
  write_strided(values, std::move(region.strides), out.data() + region.offset);
  return out;
}

template <class T>
CudaTensor<T> cat(const std::vector<CudaTensor<T>>& xs, std::size_t dim) {
  Shape shape = xs.at(0).shape;
  shape[dim] = 0;
  for (const auto& x : xs) shape[dim] += x.shape[dim];
  CudaTensor<T> out(shape, xs[0].device());
  if (out.numel() == 0) return out;
  const auto st = shape.strides();
  int64_t at = 0;  // start of the current input along dim
  for (const auto& x : xs) {
    write_strided(x, st, out.data() + at * st[dim]);
    at += x.shape[dim];
  }
  return out;
}

template <class T>
CudaTensor<T> flip(const CudaTensor<T>& x, const std::vector<std::size_t>& dims) {
  StridedView v = flipped_view(x.shape, dims);
  if (v.offset == 0 || x.numel() == 0) return x;  // only dims of size <= 1 flipped: nothing moves
  return read_strided(x.data() + v.offset, std::move(v.strides), x.shape, x.device());
}

template <class T>
CudaTensor<T> where(const Mask& cond, const CudaTensor<T>& a, const CudaTensor<T>& b) {
  const Shape shape = broadcast_shapes("where", broadcast_shapes("where", cond.shape, a.shape), b.shape);
  DeviceContext& ctx = context(a.device());
  CudaTensor<T> out(shape, a.device());
  const int64_t n = out.numel();
  if (n == 0) return out;
  const std::vector<int64_t> st[3] = {broadcast_strides(cond.shape, shape), broadcast_strides(a.shape, shape),
                                      broadcast_strides(b.shape, shape)};
  const StridedMap<3> map = make_strided_map<3>(shape, st);
  where_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(cond.data(), a.data(), b.data(), out.data(), n, map);
  check_launch("where_kernel");
  return out;
}

template <class T>
CudaTensor<T> mask_fill(const CudaTensor<T>& x, const Mask& mask, T value) {
  DeviceContext& ctx = context(x.device());
  CudaTensor<T> out(x.shape, x.device());
  const int64_t n = out.numel();
  if (n == 0) return out;
  const std::vector<int64_t> st[1] = {broadcast_strides(mask.shape, x.shape)};
  const StridedMap<1> map = make_strided_map<1>(x.shape, st);
  mask_fill_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(mask.data(), x.data(), out.data(), n, map, value);
  check_launch("mask_fill_kernel");
  return out;
}

template <class From, class To>
CudaTensor<To> cast(const CudaTensor<From>& x) {
  if constexpr (std::is_same_v<From, To>) {
    return x;  // buffers are immutable, so sharing is a copy
  } else {
    DeviceContext& ctx = context(x.device());
    CudaTensor<To> out(x.shape, x.device());
    const int64_t n = out.numel();
    if (n == 0) return out;
    cast_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(x.data(), out.data(), n);
    check_launch("cast_kernel");
    return out;
  }
}

#define EMBER_LAYOUT(T)                                                                                           \
  template CudaTensor<T> from_data<T>(const TensorData&, DType, int);                                             \
  template TensorData into_data<T>(const CudaTensor<T>&, DType);                                                  \
  template CudaTensor<T> to_device<T>(const CudaTensor<T>&, int);                                                 \
  template CudaTensor<T> full<T>(const Shape&, T, int);                                                           \
  template CudaTensor<T> reshape<T>(const CudaTensor<T>&, const Shape&);                                          \
  template CudaTensor<T> permute<T>(const CudaTensor<T>&, const std::vector<std::size_t>&);                       \
  template CudaTensor<T> expand<T>(const CudaTensor<T>&, const Shape&);                                           \
  template CudaTensor<T> slice<T>(const CudaTensor<T>&, const std::vector<Range>&);                               \
  template CudaTensor<T> slice_assign<T>(const CudaTensor<T>&, const std::vector<Range>&, const CudaTensor<T>&);   \
  template CudaTensor<T> cat<T>(const std::vector<CudaTensor<T>>&, std::size_t);                                  \
  template CudaTensor<T> flip<T>(const CudaTensor<T>&, const std::vector<std::size_t>&);                          \
  template CudaTensor<T> where<T>(const Mask&, const CudaTensor<T>&, const CudaTensor<T>&);                        \
  template CudaTensor<T> mask_fill<T>(const CudaTensor<T>&, const Mask&, T);                                      \
  template CudaTensor<float> cast<T, float>(const CudaTensor<T>&);                                                \
  template CudaTensor<int64_t> cast<T, int64_t>(const CudaTensor<T>&);                                            \
  template CudaTensor<uint8_t> cast<T, uint8_t>(const CudaTensor<T>&);
EMBER_LAYOUT(float)
EMBER_LAYOUT(int64_t)
EMBER_LAYOUT(uint8_t)
#undef EMBER_LAYOUT

}  // namespace ember::cuda
