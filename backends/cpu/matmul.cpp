// Matrix multiply on OpenBLAS. CpuTensor buffers are contiguous row-major, so every 2-D slice is directly a BLAS
// operand and no packing copies are needed.
#include <cblas.h>

#include <algorithm>
#include <type_traits>

#include "backends/cpu/kernels.hpp"
#include "backends/cpu/parallel.hpp"

namespace ember::cpu {

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    // BLAS rejects lda/ldb of 0, and the product is empty anyway: C = beta * C (beta 0 must not read C).
    for (int64_t i = 0; i < m; ++i) {
      T* row = c + i * ldc;
      if (beta == T(0)) {
        std::fill(row, row + n, T(0));
      } else {
        for (int64_t j = 0; j < n; ++j) row[j] *= beta;
      }
    }
    return;
  }
  const auto ta = trans_a ? CblasTrans : CblasNoTrans;
  const auto tb = trans_b ? CblasTrans : CblasNoTrans;
  const auto I = [](int64_t v) { return static_cast<blasint>(v); };
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, ta, tb, I(m), I(n), I(k), alpha, a, I(lda), b, I(ldb), beta, c, I(ldc));
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, I(m), I(n), I(k), alpha, a, I(lda), b, I(ldb), beta, c, I(ldc));
  }
}

template <class T>
CpuTensor<T> matmul(const CpuTensor<T>& a, const CpuTensor<T>& b) {
  const std::size_t r = a.shape.rank();
  const int64_t m = a.shape[r - 2], k = a.shape[r - 1], n = b.shape[r - 1];
  const Shape a_batch(std::vector<int64_t>(a.shape.dims.begin(), a.shape.dims.end() - 2));
  const Shape b_batch(std::vector<int64_t>(b.shape.dims.begin(), b.shape.dims.end() - 2));
  const Shape batch = broadcast_shapes("matmul", a_batch, b_batch);
  Shape out_shape = batch;
  out_shape.dims.push_back(m);
  out_shape.dims.push_back(n);
  CpuTensor<T> out(out_shape);
  const int64_t nb = batch.num_elements();
  if (nb == 0 || m == 0 || n == 0) return out;

  // b shared by every batch (rank 2 included): a's batch folds into the rows of one big GEMM.
  if (b_batch.num_elements() == 1) {
    gemm<T>(false, false, nb * m, n, k, T(1), a.data(), k, b.data(), n, T(0), out.data(), n);
    return out;
  }

  // General case: one GEMM per batch entry, with broadcast (stride-0) batch dims mapped to offsets.
  const auto sa = broadcast_strides(a_batch, batch), sb = broadcast_strides(b_batch, batch);
  const int64_t mk = m * k, kn = k * n, mn = m * n;
  const auto run = [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      int64_t oa = 0, ob = 0, rem = i;
      for (std::size_t d = batch.rank(); d-- > 0;) {
        const int64_t idx = rem % batch[d];
        rem /= batch[d];
        oa += idx * sa[d];
        ob += idx * sb[d];
      }
      gemm<T>(false, false, m, n, k, T(1), a.data() + oa * mk, k, b.data() + ob * kn, n, T(0),
              out.data() + i * mn, n);
    }
  };
  // Small matrices: OpenBLAS runs them single-threaded, so spread the batch over our pool instead.
  if (mn * k < (int64_t{1} << 18)) {
    parallel_for(nb, std::max<int64_t>(1, kParallelThreshold / std::max<int64_t>(1, mn * k)), run);
  } else {
    run(0, nb);
  }
  return out;
}

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                          float, float*, int64_t);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t, const double*,
                           int64_t, double, double*, int64_t);
template CpuTensor<float> matmul<float>(const CpuTensor<float>&, const CpuTensor<float>&);
template CpuTensor<double> matmul<double>(const CpuTensor<double>&, const CpuTensor<double>&);

}  // namespace ember::cpu
