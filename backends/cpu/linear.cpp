// x [M, K] @ op(w) + bias [N] (+ ReLU) as one GEMM. oneDNN's matmul primitive runs it where it measured faster
// (onednn_linear.hpp: skinny batch-8..256 products, bias and ReLU applied in its output pass). Otherwise OpenBLAS:
// the output's rows start as copies of the bias and BLAS accumulates onto them (beta = 1). The separate broadcast
// add it replaces was a full read of the product and a write of a new [M, N] tensor, and with beta = 0 OpenBLAS
// clears C first anyway, so the bias rows cost no extra pass; the ReLU is one pass over the still cache-hot output.
// A transposed weight is read in place by both (BLAS's trans flag, oneDNN's "ba" layout).
#include "backends/cpu/linear.hpp"

#include <algorithm>

#include "backends/cpu/kernels.hpp"
#include "backends/cpu/onednn_linear.hpp"

namespace ember::cpu {

template <class T>
CpuTensor<T> linear(const CpuTensor<T>& x, const CpuTensor<T>& w, const CpuTensor<T>* bias, bool trans_w, bool relu) {
  if (auto fused = onednn::linear(x, w, bias, trans_w, relu)) return std::move(*fused);
  const int64_t m = x.shape[0], k = x.shape[1], n = trans_w ? w.shape[0] : w.shape[1];
  CpuTensor<T> y(Shape{m, n});
  T* py = y.data();
  if (bias) {
    const T* pb = bias->data();
    for (int64_t i = 0; i < m; ++i) std::copy(pb, pb + n, py + i * n);
  }
  gemm<T>(false, trans_w, m, n, k, T(1), x.data(), k, w.data(), trans_w ? k : n, bias ? T(1) : T(0), py, n);
  if (relu) {
    // max(0, v) that keeps NaN, as the ReLU kernel does (NaN > 0 is false, so v < 0 is the test).
    for (int64_t i = 0, e = m * n; i < e; ++i) py[i] = py[i] < T(0) ? T(0) : py[i];
  }
  return y;
}

template CpuTensor<float> linear<float>(const CpuTensor<float>&, const CpuTensor<float>&, const CpuTensor<float>*,
                                        bool, bool);
template CpuTensor<double> linear<double>(const CpuTensor<double>&, const CpuTensor<double>&,
                                          const CpuTensor<double>*, bool, bool);

}  // namespace ember::cpu
