// x [M, K] @ w [K, N] + bias [N] as one GEMM: the output's rows start as copies of the bias and BLAS accumulates
// onto them (beta = 1). The separate broadcast add it replaces was a full read of the product and a write of a new
// [M, N] tensor, and with beta = 0 OpenBLAS clears C first anyway, so the bias rows cost no extra pass.
#include "backends/cpu/linear.hpp"

#include <algorithm>

#include "backends/cpu/kernels.hpp"

namespace ember::cpu {

template <class T>
CpuTensor<T> linear(const CpuTensor<T>& x, const CpuTensor<T>& w, const CpuTensor<T>* bias) {
  const int64_t m = x.shape[0], k = x.shape[1], n = w.shape[1];
  CpuTensor<T> y(Shape{m, n});
  T* py = y.data();
  if (bias) {
    const T* pb = bias->data();
    for (int64_t i = 0; i < m; ++i) std::copy(pb, pb + n, py + i * n);
  }
  gemm<T>(false, false, m, n, k, T(1), x.data(), k, w.data(), n, bias ? T(1) : T(0), py, n);
  return y;
}

template CpuTensor<float> linear<float>(const CpuTensor<float>&, const CpuTensor<float>&, const CpuTensor<float>*);
template CpuTensor<double> linear<double>(const CpuTensor<double>&, const CpuTensor<double>&,
                                          const CpuTensor<double>*);

}  // namespace ember::cpu
