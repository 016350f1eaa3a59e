// Reductions over one dim (keepdim) or over all elements, and argmax/argmin.
// A reduction over `dim` views the tensor as [outer, len, inner]; inner == 1 reduces contiguous rows, otherwise
// whole inner rows are combined at once so the loop over `inner` vectorizes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "backends/cpu/kernels.hpp"
#include "backends/cpu/parallel.hpp"
#include "backends/cpu/vector_clones.hpp"
#include "engine/backend/reduce_geometry.hpp"
#include "engine/tensor/error.hpp"

namespace ember::cpu {
namespace {

template <class T>
constexpr bool is_float = std::is_floating_point_v<T>;

// Accumulator type: float sums accumulate per block in float (16 lanes, vectorized) and across blocks in double,
// which keeps 16M-element sums accurate to ~1e-7 relative without losing vector speed.
template <class T>
using Wide = std::conditional_t<is_float<T>, double, int64_t>;

// a + b and a * b; for ints modulo 2^64 (two's complement wrap, as PyTorch's int sums and products give), where a
// plain signed overflow is undefined behaviour.
template <class A, class B>
A wrap_add(A a, B b) {
  if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else return a + b;
}
template <class A, class B>
A wrap_mul(A a, B b) {
  if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else return a * b;
}

// Columns per band of sum_columns_in_bands: at least 256, so that a band's rows are long runs, and at most 1024, whose
// 8 KiB of double accumulators stay in L1 while the band's rows stream by. Within that, as wide as one band per thread
// allows: each row of a band is one run the prefetcher follows, then a jump of the row stride, so the wider the band,
// the fewer restarts. [4096, 4096] over dim 0 on 2 threads: 1.72 ms with 256-column bands, 1.31 with 1024 (2026-11-29).
constexpr int64_t kMinBandColumns = 256, kMaxBandColumns = 1024;

int64_t band_columns(int64_t inner) {
  const int64_t per_thread = (inner + num_threads() - 1) / num_threads();
  return std::clamp((per_thread + 15) / 16 * 16, kMinBandColumns, kMaxBandColumns);
}

// The sum's blocking (fused_chain.cpp's SumState reproduces it): 16 lanes per block of 4096 elements, each lane adding
// its elements in order, blocks and the tail added in the wide type.
template <class T>
[[gnu::always_inline]] inline Wide<T> sum_contig_body(const T* x, int64_t n) {
  Wide<T> total = 0;
  constexpr int64_t kBlock = 4096, kLanes = 16;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    T acc[kLanes] = {};
    for (int64_t b = 0; b < kBlock; b += kLanes)
      for (int64_t l = 0; l < kLanes; ++l) acc[l] = wrap_add(acc[l], x[i + b + l]);
    T s = 0;
    for (int64_t l = 0; l < kLanes; ++l) s = wrap_add(s, acc[l]);
    total = wrap_add(total, s);
  }
  for (; i < n; ++i) total = wrap_add(total, x[i]);
  return total;
}

// Float sums multi-versioned like add_rows below: the baseline build runs the 16 lanes as four SSE registers, 1.5x the
// time of one AVX-512 register on a 16M-element sum (bench/README.md "OpenBLAS on a CPU it does not know"). Each lane
// adds the same elements in the same order in every clone, so all give the same bits.
EMBER_CPU_CLONES double sum_contig_float(const float* x, int64_t n) { return sum_contig_body(x, n); }
EMBER_CPU_CLONES double sum_contig_float(const double* x, int64_t n) { return sum_contig_body(x, n); }

template <class T>
Wide<T> sum_contig(const T* x, int64_t n) {
  if constexpr (is_float<T>) return sum_contig_float(x, n);
  else return sum_contig_body(x, n);
}

template <class T>
T max_of(T a, T b) {
  if constexpr (is_float<T>) return (b > a || b != b) ? b : a;  // NaN is sticky, like torch.max
  else return b > a ? b : a;
}
template <class T>
T min_of(T a, T b) {
  if constexpr (is_float<T>) return (b < a || b != b) ? b : a;
  else return b < a ? b : a;
}

template <class T>
T reduce_contig(const T* x, int64_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return static_cast<T>(sum_contig(x, n));
    case ReduceOp::Mean:
      if (n == 0) return is_float<T> ? std::numeric_limits<T>::quiet_NaN() : T(0);
      return static_cast<T>(sum_contig(x, n) / static_cast<Wide<T>>(n));
    case ReduceOp::Prod: {
      T p = 1;
      for (int64_t i = 0; i < n; ++i) p = wrap_mul(p, x[i]);
      return p;
    }
    case ReduceOp::Max: {
      T m = x[0];
      for (int64_t i = 1; i < n; ++i) m = max_of(m, x[i]);
      return m;
    }
    case ReduceOp::Min: {
      T m = x[0];
      for (int64_t i = 1; i < n; ++i) m = min_of(m, x[i]);
      return m;
    }
  }
  return T(0);
}

// acc[j] += rows[r * stride + j] for r < len, j < width: the sums over a leading dim (every Linear's bias gradient is
// one), over a band of `width` columns of rows `stride` apart. Multi-versioned like elementwise.cpp: the baseline
// build converts and adds two doubles per instruction. Additions only, each element's in the same order, so every
// clone and every band split gives the same bits.
EMBER_CPU_CLONES void add_rows(const float* __restrict rows, int64_t len, int64_t width, int64_t stride,
                               double* __restrict acc) {
  for (int64_t r = 0; r < len; ++r)
    for (int64_t j = 0; j < width; ++j) acc[j] += rows[r * stride + j];
}
EMBER_CPU_CLONES void add_rows(const double* __restrict rows, int64_t len, int64_t width, int64_t stride,
                               double* __restrict acc) {
  for (int64_t r = 0; r < len; ++r)
    for (int64_t j = 0; j < width; ++j) acc[j] += rows[r * stride + j];
}

// A float sum or mean over a leading dim with fewer outer slices than threads ([4096, 4096] over dim 0 is one slice):
// the columns are split into bands over the pool instead, each band's sums accumulated in double as above.
template <class T>
bool sum_columns_in_bands(const T* px, T* py, const ReduceView& v, ReduceOp op) {
  if constexpr (!is_float<T>) {
    return false;
  } else {
    if ((op != ReduceOp::Sum && op != ReduceOp::Mean) || v.len == 0 || v.outer >= num_threads() ||
        v.inner < 2 * kMinBandColumns || v.outer * v.len * v.inner < kParallelThreshold)
      return false;
    const int64_t columns = band_columns(v.inner);
    const int64_t bands = (v.inner + columns - 1) / columns;
    parallel_for(v.outer * bands, 1, [&](int64_t b, int64_t e) {
      double acc[kMaxBandColumns];
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = t / bands, j0 = (t % bands) * columns;
        const int64_t width = std::min(columns, v.inner - j0);
        std::fill(acc, acc + width, 0.0);
        add_rows(px + o * v.len * v.inner + j0, v.len, width, v.inner, acc);
        T* out = py + o * v.inner + j0;
        for (int64_t j = 0; j < width; ++j)
          out[j] = static_cast<T>(op == ReduceOp::Sum ? acc[j] : acc[j] / static_cast<double>(v.len));
      }
    });
    return true;
  }
}

}  // namespace

template <class T>
CpuTensor<T> reduce(const CpuTensor<T>& x, ReduceOp op, std::size_t dim) {
  CpuTensor<T> y(reduced_shape(x.shape, dim));
  // No output elements, nothing to compute: the loops below would still walk a huge reduced dim (a [2^40, 0]
  // tensor reduced over dim 0) for nothing, for hours when the empty inner loop is not optimized away.
  if (y.numel() == 0) return y;
  const ReduceView v = reduce_view(x.shape, dim);
  const T* px = x.data();
  T* py = y.data();
  if (v.inner == 1) {
    parallel_for(v.outer, std::max<int64_t>(1, kParallelThreshold / std::max<int64_t>(v.len, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t o = b; o < e; ++o) py[o] = reduce_contig(px + o * v.len, v.len, op);
                 });
    return y;
  }
  if (sum_columns_in_bands(px, py, v, op)) return y;
  const int64_t work_per_outer = v.len * v.inner;
  parallel_for(v.outer, std::max<int64_t>(1, kParallelThreshold / std::max<int64_t>(work_per_outer, 1)),
               [&](int64_t b, int64_t e) {
                 std::vector<Wide<T>> acc(static_cast<std::size_t>(v.inner));
                 for (int64_t o = b; o < e; ++o) {
                   const T* base = px + o * work_per_outer;
                   T* out = py + o * v.inner;
                   if (op == ReduceOp::Sum || op == ReduceOp::Mean) {
                     std::fill(acc.begin(), acc.end(), Wide<T>(0));
                     if constexpr (is_float<T>) {
                       add_rows(base, v.len, v.inner, v.inner, acc.data());
                     } else {
                       for (int64_t r = 0; r < v.len; ++r) {
                         const T* row = base + r * v.inner;
                         for (int64_t j = 0; j < v.inner; ++j) acc[j] = wrap_add(acc[j], row[j]);
                       }
                     }
                     for (int64_t j = 0; j < v.inner; ++j) {
                       if (op == ReduceOp::Sum) out[j] = static_cast<T>(acc[j]);
                       else if (v.len == 0) out[j] = is_float<T> ? std::numeric_limits<T>::quiet_NaN() : T(0);
                       else out[j] = static_cast<T>(acc[j] / static_cast<Wide<T>>(v.len));
                     }
                   } else if (op == ReduceOp::Prod) {
                     for (int64_t j = 0; j < v.inner; ++j) out[j] = T(1);
                     for (int64_t r = 0; r < v.len; ++r)
                       for (int64_t j = 0; j < v.inner; ++j) out[j] = wrap_mul(out[j], base[r * v.inner + j]);
                   } else {
                     for (int64_t j = 0; j < v.inner; ++j) out[j] = base[j];
                     for (int64_t r = 1; r < v.len; ++r) {
                       const T* row = base + r * v.inner;
                       if (op == ReduceOp::Max)
                         for (int64_t j = 0; j < v.inner; ++j) out[j] = max_of(out[j], row[j]);
                       else
                         for (int64_t j = 0; j < v.inner; ++j) out[j] = min_of(out[j], row[j]);
                     }
                   }
                 }
               });
  return y;
}

template <class T>
CpuTensor<T> reduce_all(const CpuTensor<T>& x, ReduceOp op) {
  CpuTensor<T> y(Shape{1});
  const int64_t n = x.numel();
  const T* px = x.data();
  const int threads = num_threads();
  if (n < kParallelThreshold || threads <= 1 || op == ReduceOp::Prod) {
    y.data()[0] = reduce_contig(px, n, op);
    return y;
  }
  // Parallel partials, combined in the wide type.
  std::vector<Wide<T>> sums(threads, 0);
  std::vector<T> ext(threads, px[0]);
  const int64_t chunk = (n + threads - 1) / threads;
  parallel_for(threads, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t s = t * chunk, f = std::min(n, s + chunk);
      if (s >= f) continue;
      if (op == ReduceOp::Sum || op == ReduceOp::Mean) sums[t] = sum_contig(px + s, f - s);
      else ext[t] = reduce_contig(px + s, f - s, op);
    }
  });
  if (op == ReduceOp::Sum || op == ReduceOp::Mean) {
    Wide<T> total = 0;
    for (auto s : sums) total += s;
    y.data()[0] = static_cast<T>(op == ReduceOp::Mean ? total / static_cast<Wide<T>>(n) : total);
  } else {
    T m = ext[0];
    for (auto v : ext) m = op == ReduceOp::Max ? max_of(m, v) : min_of(m, v);
    y.data()[0] = m;
  }
  return y;
}

template <class T>
Index arg_reduce(const CpuTensor<T>& x, ArgReduceOp op, std::size_t dim) {
  Index y(reduced_shape(x.shape, dim));
  if (y.numel() == 0) return y;  // as reduce(): [2^40, 4, 2, 0] over dim 2 walked 2^42 empty rows (a fuzzer timeout)
  const ReduceView v = reduce_view(x.shape, dim);
  const T* px = x.data();
  int64_t* py = y.data();
  const bool want_max = op == ArgReduceOp::ArgMax;
  // First occurrence wins; a NaN counts as the extreme (torch semantics).
  auto better = [want_max](T cand, T best) {
    if constexpr (is_float<T>) {
      if (best != best) return false;
      if (cand != cand) return true;
    }
    return want_max ? cand > best : cand < best;
  };
  parallel_for(v.outer, std::max<int64_t>(1, kParallelThreshold / std::max<int64_t>(v.len * v.inner, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t o = b; o < e; ++o) {
                   const T* base = px + o * v.len * v.inner;
                   for (int64_t j = 0; j < v.inner; ++j) {
                     int64_t bi = 0;
                     T best = base[j];
                     for (int64_t r = 1; r < v.len; ++r) {
                       const T c = base[r * v.inner + j];
                       if (better(c, best)) {
                         best = c;
                         bi = r;
                       }
                     }
                     py[o * v.inner + j] = bi;
                   }
                 }
               });
  return y;
}

#define EMBER_INSTANTIATE(T)                                                 \
  template CpuTensor<T> reduce<T>(const CpuTensor<T>&, ReduceOp, std::size_t); \
  template CpuTensor<T> reduce_all<T>(const CpuTensor<T>&, ReduceOp);          \
  template Index arg_reduce<T>(const CpuTensor<T>&, ArgReduceOp, std::size_t);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(double)
EMBER_INSTANTIATE(int64_t)
#undef EMBER_INSTANTIATE

}  // namespace ember::cpu
