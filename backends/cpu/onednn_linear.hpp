#pragma once
// oneDNN's matmul primitive for the CPU backend's f32 Linear / ONNX Gemm (linear.cpp asks it first). On the skinny
// products of small-batch MLPs ([64 x 64..256] @ [.. x 256]) its JIT kernel ran 1.25-1.6x faster than OpenBLAS's
// sgemm here, reads a transposed ([N, K], PyTorch's Linear) weight in place, and applies the bias and a ReLU in its
// output pass (post-ops), as ONNX Runtime's MLAS does: bench/README.md "A fused linear through oneDNN".
// It declines (nullopt) where OpenBLAS measured faster (one row, fewer than 64 output columns), for f64, empty
// problems, builds without oneDNN (onednn_linear_off.cpp) and when oneDNN is turned off (onednn::enabled()).
#include <optional>

#include "backends/cpu/cpu_tensor.hpp"

namespace ember::cpu::onednn {

// x [M, K] @ (trans_w ? w^T : w) + bias [N], then max(0, .) when relu; w is [N, K] when trans_w, else [K, N].
std::optional<CpuTensor<float>> linear(const CpuTensor<float>& x, const CpuTensor<float>& w,
                                       const CpuTensor<float>* bias, bool trans_w, bool relu);

// C [m, n] = op(A) @ op(B), op transposing an operand stored [k, m] / [n, k] with leading dim lda / ldb, written to
// a fresh row-major c (ldc n): matmul.cpp's single-GEMM products (autodiff's backward reads its transposes in place
// this way). False: declined, c untouched.
bool gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
          int64_t ldb, float* c);

// C = alpha op(A) op(B) + beta C, row-major with leading dims, as cblas_sgemm: oneDNN's sgemm (JIT kernels for this
// CPU) on one OpenMP thread per part, the product split over Ember's pool by rows (or by columns when it has few
// rows). blas_route.hpp says when matmul.cpp's gemm<float> asks it. False (c untouched) when oneDNN is off or absent.
bool sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

inline std::optional<CpuTensor<double>> linear(const CpuTensor<double>&, const CpuTensor<double>&,
                                               const CpuTensor<double>*, bool, bool) {
  return std::nullopt;
}

}  // namespace ember::cpu::onednn
