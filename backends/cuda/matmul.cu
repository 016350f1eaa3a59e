// Matrix multiply on cuBLAS with NumPy batch broadcasting. Operands are contiguous row-major, so every matrix of a
// batch is a cuBLAS operand at a fixed element stride: a batch dim that one operand lacks (or has as 1) is stride
// 0 when that operand is shared by the whole batch; an operand broadcast over only some batch dims is expanded
// first. A transposed operand (float_matmul_transposed, autodiff's backward) is read in place.
#include "backends/cuda/kernels.hpp"
#include "backends/cuda/runtime.cuh"

namespace ember::cuda {

CudaTensor<float> matmul(const CudaTensor<float>& a, const CudaTensor<float>& b, bool trans_a, bool trans_b) {
  const std::size_t r = a.shape.rank();
  const int64_t m = a.shape[r - (trans_a ? 1 : 2)], k = a.shape[r - (trans_a ? 2 : 1)];
  const int64_t n = b.shape[r - (trans_b ? 2 : 1)];
  const int64_t lda = trans_a ? m : k, ldb = trans_b ? k : n;
  const Shape a_batch(std::vector<int64_t>(a.shape.dims.begin(), a.shape.dims.end() - 2));
  const Shape b_batch(std::vector<int64_t>(b.shape.dims.begin(), b.shape.dims.end() - 2));
  const Shape batch = broadcast_shapes("matmul", a_batch, b_batch);
  Shape out_shape = batch;
  out_shape.dims.push_back(m);
  out_shape.dims.push_back(n);
  const int dev = a.device();
  DeviceContext& ctx = context(dev);
  CudaTensor<float> out(out_shape, dev);
  const int64_t nb = batch.num_elements();
  if (nb == 0 || m == 0 || n == 0) return out;
  if (k == 0) return full<float>(out_shape, 0.0f, dev);  // an empty sum: cuBLAS may leave C untouched

  // b shared by every batch entry (rank 2 included) and a not transposed: a's batch folds into the rows of one
  // GEMM, which cuBLAS runs far better than many small ones.
  if (b_batch.num_elements() == 1 && (!trans_a || nb == 1)) {
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
  const float* pa = operand(a, a_batch, a.shape[r - 2], a.shape[r - 1], a_full, sa);
  const float* pb = operand(b, b_batch, b.shape[r - 2], b.shape[r - 1], b_full, sb);
  gemm_rm(ctx, trans_a, trans_b, m, n, k, 1.0f, pa, lda, sa, pb, ldb, sb, 0.0f, out.data(), n, m * n, nb);
  return out;
}

}  // namespace ember::cuda
