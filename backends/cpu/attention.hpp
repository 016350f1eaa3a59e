#pragma once
// Fused, tiled scaled-dot-product attention on the CPU (flash attention; backends/cpu/attention.cpp).
#include "backends/cpu/cpu_tensor.hpp"
#include "engine/backend/sdpa_types.hpp"

namespace ember::cpu {

template <class T>
SdpaForward<CpuTensor<T>> sdpa_forward(const CpuTensor<T>& q, const CpuTensor<T>& k, const CpuTensor<T>& v,
                                       const CpuTensor<T>* bias, const SdpaOptions& o);
template <class T>
SdpaGrads<CpuTensor<T>> sdpa_backward(const CpuTensor<T>& q, const CpuTensor<T>& k, const CpuTensor<T>& v,
                                      const CpuTensor<T>* bias, const CpuTensor<T>& out, const CpuTensor<T>& lse,
                                      const CpuTensor<T>& dout, const SdpaOptions& o);

}  // namespace ember::cpu
