// Matrix multiply on cuBLAS with NumPy batch broadcasting. Operands are contiguous row-major, so every matrix of a
// batch is a cuBLAS operand at a fixed element stride: a batch dim that one operand lacks (or has as 1) is stride
// 0 when that operand is shared by the whole batch; an operand broadcast over only some batch dims is expanded
// first. A transposed operand (float_matmul_transposed, autodiff's backward) is read in place.
#include "backends/cuda/kernels.hpp"
#include "backends/cuda/runtime.cuh"
#include "engine/backend/matmul_geometry.hpp"

namespace ember::cuda {

CudaTensor<float> matmul(const CudaTensor<float>& a, const CudaTensor<float>& b, bool trans_a, bool trans_b) {
  const MatmulGeometry g = matmul_geometry(a.shape, b.shape, trans_a, trans_b);
  const int64_t m = g.m, n = g.n, k = g.k, lda = g.lda, ldb = g.ldb, nb = g.batches();
  const Shape& batch = g.batch;
  const int dev = a.device();
  DeviceContext& ctx = context(dev);
  CudaTensor<float> out(g.out_shape(), dev);
  if (g.empty()) return out;
  if (k == 0) return full<float>(g.out_shape(), 0.0f, dev);  // an empty sum: cuBLAS may leave C untouched

  if (g.batch_folds_into_rows(trans_a)) {
    gemm_rm(ctx, trans_a, trans_b, nb * m, n, k, 1.0f, a.data(), lda, 0, b.data(), ldb, 0, 0.0f, out.data(), n, 0, 1);
    return out;
  }
  // An operand covering the whole batch steps by one matrix; one with a single matrix repeats it (stride 0);
  // one broadcast over only some batch dims is materialized at the full batch shape first.
  auto operand = [&](const CudaTensor<float>& x, const Shape& xb, int64_t rows, int64_t cols, CudaTensor<float>& hold,
                     int64_t& stride) -> const float* {
    if (xb.num_elements() == 1) {
      stride = 0;
      return x.data();
    }
    stride = rows * cols;
    if (xb.num_elements() == nb) return x.data();  // same batch dims up to leading/unit ones: same layout
    Shape full_shape = batch;
    full_shape.dims.push_back(rows);
    full_shape.dims.push_back(cols);
    hold = expand(reshape(x, [&] {
                    Shape s = xb;
                    s.dims.push_back(rows);
                    s.dims.push_back(cols);
                    return s;
                  }()),
                  full_shape);
    return hold.data();
  };
  CudaTensor<float> a_full, b_full;
  int64_t sa = 0, sb = 0;
  const std::size_t r = a.shape.rank();
  const float* pa = operand(a, g.a_batch, a.shape[r - 2], a.shape[r - 1], a_full, sa);
  const float* pb = operand(b, g.b_batch, b.shape[r - 2], b.shape[r - 1], b_full, sb);
  gemm_rm(ctx, trans_a, trans_b, m, n, k, 1.0f, pa, lda, sa, pb, ldb, sb, 0.0f, out.data(), n, m * n, nb);
  return out;
}

}  // namespace ember::cuda
