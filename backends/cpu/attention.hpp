#pragma once
// Fused scaled-dot-product attention on the CPU. sdpa_forward / sdpa_backward pick the path by the score matrix's
// size (attention_geometry.hpp): flash tiles (attention.cpp) for long sequences, whole-head GEMMs
// (attention_matmul.cpp) for short ones. The *_flash and *_matmul entries are one path alone (tests compare them).
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

template <class T>
SdpaForward<CpuTensor<T>> sdpa_forward_flash(const CpuTensor<T>& q, const CpuTensor<T>& k, const CpuTensor<T>& v,
                                             const CpuTensor<T>* bias, const SdpaOptions& o);
template <class T>
SdpaGrads<CpuTensor<T>> sdpa_backward_flash(const CpuTensor<T>& q, const CpuTensor<T>& k, const CpuTensor<T>& v,
                                            const CpuTensor<T>* bias, const CpuTensor<T>& out,
                                            const CpuTensor<T>& lse, const CpuTensor<T>& dout,
                                            const SdpaOptions& o);
template <class T>
SdpaForward<CpuTensor<T>> sdpa_forward_matmul(const CpuTensor<T>& q, const CpuTensor<T>& k, const CpuTensor<T>& v,
                                              const CpuTensor<T>* bias, const SdpaOptions& o);
template <class T>
SdpaGrads<CpuTensor<T>> sdpa_backward_matmul(const CpuTensor<T>& q, const CpuTensor<T>& k, const CpuTensor<T>& v,
                                             const CpuTensor<T>* bias, const CpuTensor<T>& out,
                                             const CpuTensor<T>& lse, const CpuTensor<T>& dout,
                                             const SdpaOptions& o);

}  // namespace ember::cpu
