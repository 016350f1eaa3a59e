// Sorting and scanning along one dim (issue 13): argsort (stable, NaN ordered as the largest value like torch.sort)
// and cumsum. Both view x as [outer, len, inner] and work on one line of `len` elements (stride inner) at a time.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "backends/cpu/kernels.hpp"
#include "backends/cpu/parallel.hpp"
#include "engine/backend/reduce_geometry.hpp"

namespace ember::cpu {

namespace {
// Lines handed to one task: enough elements per task that splitting pays for itself.
int64_t line_grain(const ReduceView& v) { return std::max<int64_t>(1, kParallelThreshold / std::max<int64_t>(v.len, 1)); }
}  // namespace

template <class T>
Index argsort(const CpuTensor<T>& x, std::size_t dim, bool descending) {
  Index y(x.shape);
  if (y.numel() == 0) return y;
  const ReduceView v = reduce_view(x.shape, dim);
  const T* px = x.data();
  int64_t* py = y.data();
  // NaN sorts after every number (ascending) and before them (descending); NaNs are equal among themselves, so
  // the stable sort keeps their order as it keeps every tie's.
  auto less = [](T a, T b) { return !std::isnan(a) && (std::isnan(b) || a < b); };
  parallel_for(v.outer * v.inner, line_grain(v), [&](int64_t b, int64_t e) {
    std::vector<int64_t> order(static_cast<std::size_t>(v.len));
    for (int64_t line = b; line < e; ++line) {
      const int64_t o = line / v.inner, j = line % v.inner;
      const T* base = px + o * v.len * v.inner + j;
      std::iota(order.begin(), order.end(), int64_t{0});
      if (descending)
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t a, int64_t c) { return less(base[c * v.inner], base[a * v.inner]); });
      else
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t a, int64_t c) { return less(base[a * v.inner], base[c * v.inner]); });
      int64_t* out = py + o * v.len * v.inner + j;
      for (int64_t r = 0; r < v.len; ++r) out[r * v.inner] = order[static_cast<std::size_t>(r)];
    }
  });
  return y;
}

template <class T>
CpuTensor<T> cumsum(const CpuTensor<T>& x, std::size_t dim) {
  CpuTensor<T> y(x.shape);
  if (y.numel() == 0) return y;
  const ReduceView v = reduce_view(x.shape, dim);
  const T* px = x.data();
  T* py = y.data();
  // Row by row, the whole inner block at once: the inner loop runs over contiguous memory.
  parallel_for(v.outer, std::max<int64_t>(1, kParallelThreshold / std::max<int64_t>(v.len * v.inner, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t o = b; o < e; ++o) {
                   const T* src = px + o * v.len * v.inner;
                   T* dst = py + o * v.len * v.inner;
                   for (int64_t j = 0; j < v.inner; ++j) dst[j] = src[j];
                   for (int64_t r = 1; r < v.len; ++r)
                     for (int64_t j = 0; j < v.inner; ++j)
                       dst[r * v.inner + j] = dst[(r - 1) * v.inner + j] + src[r * v.inner + j];
                 }
               });
  return y;
}

#define EMBER_INSTANTIATE(T)                                              \
  template Index argsort<T>(const CpuTensor<T>&, std::size_t, bool); \
  template CpuTensor<T> cumsum<T>(const CpuTensor<T>&, std::size_t);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(double)
#undef EMBER_INSTANTIATE

}  // namespace ember::cpu
