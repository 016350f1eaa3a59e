#pragma once
// Fused LayerNorm over the last dim on the CPU (optional_ops.hpp HasFusedLayerNorm): layer_norm.cpp.
#include "backends/cpu/cpu_tensor.hpp"
#include "engine/backend/layer_norm_types.hpp"

namespace ember::cpu {

template <class T>
LayerNormForward<CpuTensor<T>> layer_norm_forward(const CpuTensor<T>& x, const CpuTensor<T>& gamma,
                                                  const CpuTensor<T>& beta, double eps);
template <class T>
LayerNormGrads<CpuTensor<T>> layer_norm_backward(const CpuTensor<T>& x, const CpuTensor<T>& gamma,
                                                 const CpuTensor<T>& mean, const CpuTensor<T>& rstd,
                                                 const CpuTensor<T>& dout);

}  // namespace ember::cpu
