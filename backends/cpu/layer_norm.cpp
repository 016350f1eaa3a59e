// Fused LayerNorm on the CPU. The forward reads each row twice while it is in cache (the sum for the mean, then the
// sum of squared deviations: the two-pass variance, which keeps the composed default's rounding behaviour rather
// than E[x^2] - mean^2's cancellation) and writes it once; the backward reads x and dout once per row for the two
// row sums, once more to write dx, and accumulates dgamma and dbeta as it goes. The composed default makes ~8
// full passes forward and ~12 backward, each an allocation and a read and write of the whole tensor.
//
// The inner loops run over a contiguous row with no dependence between iterations, compiled for AVX-512, AVX2 and
// baseline x86-64 (as elementwise.cpp and attention.cpp are). The row sums keep 16 partial sums (lane_sum.hpp),
// which GCC turns into vector adds. Rows are split over threads in the forward; the backward's dgamma / dbeta make
// each task keep its own partial sums, added in task order so a run is reproducible for a given thread count.
#include "backends/cpu/layer_norm.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/lane_sum.hpp"
#include "backends/cpu/parallel.hpp"
#include "backends/cpu/vector_clones.hpp"

namespace ember::cpu {
namespace {

template <class T>
EMBER_CPU_CLONES void forward_rows(const T* __restrict x, const T* __restrict gamma, const T* __restrict beta,
                                   T* __restrict y, T* __restrict mean_out, T* __restrict rstd_out, int64_t r0,
                                   int64_t r1, int64_t d, T eps) {
  for (int64_t r = r0; r < r1; ++r) {
    const T* __restrict xr = x + r * d;
    T* __restrict yr = y + r * d;
    const T mean = lane_sum<T>(d, [&](int64_t j) { return xr[j]; }) / static_cast<T>(d);
    const T sq = lane_sum<T>(d, [&](int64_t j) { return (xr[j] - mean) * (xr[j] - mean); });
    const T rstd = T(1) / std::sqrt(sq / static_cast<T>(d) + eps);
    for (int64_t j = 0; j < d; ++j) yr[j] = (xr[j] - mean) * rstd * gamma[j] + beta[j];
    mean_out[r] = mean;
    rstd_out[r] = rstd;
  }
}

// dgamma and dbeta are this task's partial sums (added to, not overwritten).
template <class T>
EMBER_CPU_CLONES void backward_rows(const T* __restrict x, const T* __restrict gamma, const T* __restrict mean,
                                    const T* __restrict rstd, const T* __restrict dy, T* __restrict dx,
                                    T* __restrict dgamma, T* __restrict dbeta, int64_t r0, int64_t r1, int64_t d) {
  const T inv_d = T(1) / static_cast<T>(d);
  for (int64_t r = r0; r < r1; ++r) {
    const T* __restrict xr = x + r * d;
    const T* __restrict dyr = dy + r * d;
    T* __restrict dxr = dx + r * d;
    const T m = mean[r], s = rstd[r];
    for (int64_t j = 0; j < d; ++j) {
      dgamma[j] += dyr[j] * (xr[j] - m) * s;
      dbeta[j] += dyr[j];
    }
    // sum(dxhat), sum(dxhat * xhat)
    T a = lane_sum<T>(d, [&](int64_t j) { return dyr[j] * gamma[j]; });
    T b = lane_sum<T>(d, [&](int64_t j) { return dyr[j] * gamma[j] * ((xr[j] - m) * s); });
    a *= inv_d;
    b *= inv_d;
    for (int64_t j = 0; j < d; ++j) {
      const T xhat = (xr[j] - m) * s;
      dxr[j] = (dyr[j] * gamma[j] - a - xhat * b) * s;
    }
  }
}

Shape row_stat_shape(const Shape& s) {
  std::vector<int64_t> dims(s.dims.begin(), s.dims.end());
  dims.back() = 1;
  return Shape(std::move(dims));
}

}  // namespace

template <class T>
LayerNormForward<CpuTensor<T>> layer_norm_forward(const CpuTensor<T>& x, const CpuTensor<T>& gamma,
                                                  const CpuTensor<T>& beta, double eps) {
  const int64_t d = x.shape[x.shape.rank() - 1];
  const int64_t rows = d == 0 ? 0 : x.numel() / d;
  const Shape stat = row_stat_shape(x.shape);
  LayerNormForward<CpuTensor<T>> r{CpuTensor<T>(x.shape), CpuTensor<T>(stat), CpuTensor<T>(stat)};
  const T *px = x.data(), *pg = gamma.data(), *pb = beta.data();
  T *py = r.out.data(), *pm = r.mean.data(), *ps = r.rstd.data();
  parallel_for(rows, std::max<int64_t>(1, kParallelThreshold / std::max<int64_t>(1, d)), [&](int64_t lo, int64_t hi) {
    forward_rows<T>(px, pg, pb, py, pm, ps, lo, hi, d, static_cast<T>(eps));
  });
  return r;
}

template <class T>
LayerNormGrads<CpuTensor<T>> layer_norm_backward(const CpuTensor<T>& x, const CpuTensor<T>& gamma,
                                                 const CpuTensor<T>& mean, const CpuTensor<T>& rstd,
                                                 const CpuTensor<T>& dout) {
  const int64_t d = x.shape[x.shape.rank() - 1];
  const int64_t rows = d == 0 ? 0 : x.numel() / d;
  LayerNormGrads<CpuTensor<T>> r{CpuTensor<T>(x.shape), CpuTensor<T>(gamma.shape), CpuTensor<T>(gamma.shape)};
  T *dg = r.gamma.data(), *db = r.beta.data();
  std::fill(dg, dg + d, T(0));
  std::fill(db, db + d, T(0));
  const T *px = x.data(), *pg = gamma.data(), *pm = mean.data(), *ps = rstd.data(), *pdy = dout.data();
  T* pdx = r.x.data();
  const int64_t grain = std::max<int64_t>(1, kParallelThreshold / std::max<int64_t>(1, d));
  if (rows <= grain || num_threads() == 1) {
    backward_rows<T>(px, pg, pm, ps, pdy, pdx, dg, db, 0, rows, d);
    return r;
  }
  // Fixed chunks, each with its own dgamma / dbeta, summed in chunk order.
  const int64_t chunks = (rows + grain - 1) / grain;
  std::vector<T> partial(static_cast<std::size_t>(chunks * 2 * d), T(0));
  parallel_for(chunks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t c = lo; c < hi; ++c) {
      T* part = partial.data() + c * 2 * d;
      backward_rows<T>(px, pg, pm, ps, pdy, pdx, part, part + d, c * grain, std::min(rows, (c + 1) * grain), d);
    }
  });
  for (int64_t c = 0; c < chunks; ++c) {
    const T* part = partial.data() + c * 2 * d;
    for (int64_t j = 0; j < d; ++j) {
      dg[j] += part[j];
      db[j] += part[d + j];
    }
  }
  return r;
}

template LayerNormForward<CpuTensor<float>> layer_norm_forward<float>(const CpuTensor<float>&, const CpuTensor<float>&,
                                                                      const CpuTensor<float>&, double);
template LayerNormForward<CpuTensor<double>> layer_norm_forward<double>(const CpuTensor<double>&,
                                                                        const CpuTensor<double>&,
                                                                        const CpuTensor<double>&, double);
template LayerNormGrads<CpuTensor<float>> layer_norm_backward<float>(const CpuTensor<float>&, const CpuTensor<float>&,
                                                                     const CpuTensor<float>&, const CpuTensor<float>&,
                                                                     const CpuTensor<float>&);
template LayerNormGrads<CpuTensor<double>> layer_norm_backward<double>(const CpuTensor<double>&,
                                                                       const CpuTensor<double>&,
                                                                       const CpuTensor<double>&,
                                                                       const CpuTensor<double>&,
                                                                       const CpuTensor<double>&);

}  // namespace ember::cpu
