// Matrix multiply on OpenBLAS (f32 on oneDNN's sgemm where OpenBLAS's kernels lag the CPU: blas_route.hpp).
// CpuTensor buffers are contiguous row-major, so every 2-D slice is directly a BLAS operand and no packing copies are
// needed.
#include <cblas.h>

#include <algorithm>
#include <type_traits>

#include "backends/cpu/blas_route.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/onednn_linear.hpp"
#include "backends/cpu/parallel.hpp"
#include "engine/backend/matmul_geometry.hpp"
#include "engine/backend/strided_view.hpp"

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
  // OpenBLAS's kernels are for an older instruction set than this CPU's (blas_route.hpp): oneDNN's sgemm instead.
  if constexpr (std::is_same_v<T, float>) {
    if (blas::sgemm_route() == blas::Sgemm::OneDnn &&
        onednn::sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
      return;
  }
  // A single row or column is a matrix-vector product: OpenBLAS's sgemm pays ~15 µs of packing for m == 1 at
  // 256x256 where sgemv takes ~3 µs, and batch-1 inference is exactly this case.
  if (m == 1 || n == 1) {
    const auto I = [](int64_t v) { return static_cast<blasint>(v); };
    auto gemv = [&](bool row_trans, int64_t rows, int64_t cols, const T* mat, int64_t ld, const T* x, int64_t incx,
                    int64_t incy) {
      const auto t = row_trans ? CblasTrans : CblasNoTrans;
      if constexpr (std::is_same_v<T, float>)
        cblas_sgemv(CblasRowMajor, t, I(rows), I(cols), alpha, mat, I(ld), x, I(incx), beta, c, I(incy));
      else
        cblas_dgemv(CblasRowMajor, t, I(rows), I(cols), alpha, mat, I(ld), x, I(incx), beta, c, I(incy));
    };
    if (m == 1) {  // c[1, n] = op(a)[1, k] op(b)[k, n]  <=>  c^T = op(b)^T a^T
      const int64_t inca = trans_a ? lda : 1;  // a stored [k, 1] when transposed
      if (trans_b) gemv(false, n, k, b, ldb, a, inca, 1);  // b stored [n, k]
      else gemv(true, k, n, b, ldb, a, inca, 1);           // b stored [k, n]
    } else {       // c[m, 1] = op(a)[m, k] op(b)[k, 1]
      const int64_t incb = trans_b ? 1 : ldb;  // b stored [k, 1] unless transposed ([1, k])
      if (trans_a) gemv(true, k, m, a, lda, b, incb, ldc);  // a stored [k, m]
      else gemv(false, m, k, a, lda, b, incb, ldc);         // a stored [m, k]
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

// op(a) @ op(b) where op transposes the last two dims when asked; a transposed operand is read in place by BLAS
// (autodiff's matmul backward needs g @ b^T and a^T @ g, which would otherwise copy a permuted tensor first).
template <class T>
CpuTensor<T> matmul(const CpuTensor<T>& a, const CpuTensor<T>& b, bool trans_a, bool trans_b) {
  const MatmulGeometry g = matmul_geometry(a.shape, b.shape, trans_a, trans_b);
  const int64_t m = g.m, n = g.n, k = g.k, nb = g.batches();
  CpuTensor<T> out(g.out_shape());
  if (g.empty()) return out;

  // One GEMM (a single batch entry, or batch dims that fold into A's rows): oneDNN's matmul where it measured faster
  // than OpenBLAS on the skinny products of small-batch MLPs (onednn_linear.hpp).
  if constexpr (std::is_same_v<T, float>) {
    const bool folds = g.batch_folds_into_rows(trans_a);
    if ((folds || nb == 1) && onednn::gemm(trans_a, trans_b, folds ? nb * m : m, n, k, a.data(), g.lda, b.data(),
                                           g.ldb, out.data()))
      return out;
  }
  if (g.batch_folds_into_rows(trans_a)) {
    gemm<T>(trans_a, trans_b, nb * m, n, k, T(1), a.data(), g.lda, b.data(), g.ldb, T(0), out.data(), n);
    return out;
  }

  // General case: one GEMM per batch entry, broadcast (stride-0) batch dims mapped to offsets.
  const int64_t mn = m * n;
  const auto run = [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      gemm<T>(trans_a, trans_b, m, n, k, T(1), a.data() + strided_offset(i, g.batch.dims, g.a_strides), g.lda,
              b.data() + strided_offset(i, g.batch.dims, g.b_strides), g.ldb, T(0), out.data() + i * mn, n);
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
template CpuTensor<float> matmul<float>(const CpuTensor<float>&, const CpuTensor<float>&, bool, bool);
template CpuTensor<double> matmul<double>(const CpuTensor<double>&, const CpuTensor<double>&, bool, bool);

}  // namespace ember::cpu
