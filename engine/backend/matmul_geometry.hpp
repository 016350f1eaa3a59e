#pragma once
// The geometry of a batched matmul op(a) @ op(b) on contiguous row-major operands, op transposing the last two dims
// when asked: matrix sizes and leading dims, the NumPy-broadcast batch, and where each operand's matrix of a batch
// entry starts. Shared by every backend's matmul and by the tensor layer's shape check.
#include <cstdint>
#include <vector>

#include "engine/tensor/shape.hpp"

namespace ember {

struct MatmulGeometry {
  int64_t m = 0, n = 0, k = 0;  // op(a) is [m, k], op(b) is [k, n]
  int64_t lda = 0, ldb = 0;     // leading dims of a and b as stored (transposed operands are read in place)
  Shape a_batch, b_batch;       // the operands' own batch dims (all but the last two)
  Shape batch;                  // their broadcast
  // Element offset steps per batch dim (one per dim of `batch`): a matrix's size where the operand has the dim,
  // 0 where it is broadcast. The output is contiguous: c_strides step by m * n.
  std::vector<int64_t> a_strides, b_strides, c_strides;

  int64_t batches() const { return batch.num_elements(); }
  Shape out_shape() const {
    Shape s = batch;
    s.dims.push_back(m);
    s.dims.push_back(n);
    return s;
  }
  bool empty() const { return batches() == 0 || m == 0 || n == 0; }
  // b is one matrix shared by every batch entry and a's rows run on contiguously across the batch (a not
  // transposed, or a single matrix): the whole batch is then one GEMM of batches() * m rows, which every BLAS runs
  // far better than many small ones.
  bool batch_folds_into_rows(bool trans_a) const { return b_batch.num_elements() == 1 && (!trans_a || batches() == 1); }
};

// a and b have the same rank >= 2 and matching inner dims (checks::matmul). Throws ShapeError when the batch dims
// do not broadcast.
inline MatmulGeometry matmul_geometry(const Shape& a, const Shape& b, bool trans_a, bool trans_b) {
  MatmulGeometry g;
  const std::size_t r = a.rank();
  g.m = a[r - (trans_a ? 1 : 2)], g.k = a[r - (trans_a ? 2 : 1)];
  g.n = b[r - (trans_b ? 2 : 1)];
  g.lda = trans_a ? g.m : g.k, g.ldb = trans_b ? g.k : g.n;
  g.a_batch = Shape(std::vector<int64_t>(a.dims.begin(), a.dims.end() - 2));
  g.b_batch = Shape(std::vector<int64_t>(b.dims.begin(), b.dims.end() - 2));
  g.batch = broadcast_shapes("matmul", g.a_batch, g.b_batch);
  g.a_strides = broadcast_strides(g.a_batch, g.batch);
  g.b_strides = broadcast_strides(g.b_batch, g.batch);
  g.c_strides = g.batch.strides();
  for (std::size_t d = 0; d < g.batch.rank(); ++d) {
    g.a_strides[d] *= g.m * g.k;
    g.b_strides[d] *= g.k * g.n;
    g.c_strides[d] *= g.m * g.n;
  }
  return g;
}

}  // namespace ember
