#pragma once
// Fused affine map x @ w + bias on the CPU (optional_ops.hpp HasFusedLinear): linear.cpp.
#include "backends/cpu/cpu_tensor.hpp"

namespace ember::cpu {

template <class T>
CpuTensor<T> linear(const CpuTensor<T>& x, const CpuTensor<T>& w, const CpuTensor<T>* bias);

}  // namespace ember::cpu
