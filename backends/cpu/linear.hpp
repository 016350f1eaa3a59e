#pragma once
// Fused affine map x @ w + bias on the CPU (optional_ops.hpp HasFusedLinear / HasFusedLinearAct): linear.cpp.
#include "backends/cpu/cpu_tensor.hpp"

namespace ember::cpu {

// x [M, K] @ op(w) + bias [N] (bias null: none), op(w) = w^T for an [N, K] w when trans_w, else w [K, N]; then
// max(0, .) when relu.
template <class T>
CpuTensor<T> linear(const CpuTensor<T>& x, const CpuTensor<T>& w, const CpuTensor<T>* bias, bool trans_w = false,
                    bool relu = false);

}  // namespace ember::cpu
