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

// Attention on the rows of one qkv Linear's output, qkv [N, T, 3 d] (d = heads * E; q, k, v the column blocks [0, d),
// [d, 2d), [2d, 3d), head h at columns h * E of each), without a bias: out [N, T, d] with the heads merged the same
// way and lse [N, heads, T]; the backward returns dqkv [N, T, 3 d]. The GEMM path only (callers check
// sdpa_detail::uses_matmul_path(T, T) first): the heads are read and written in place, no permute copies.
template <class T>
SdpaForward<CpuTensor<T>> sdpa_packed_forward(const CpuTensor<T>& qkv, int64_t heads, const SdpaOptions& o);
template <class T>
CpuTensor<T> sdpa_packed_backward(const CpuTensor<T>& qkv, const CpuTensor<T>& out, const CpuTensor<T>& lse,
                                  const CpuTensor<T>& dout, int64_t heads, const SdpaOptions& o);

}  // namespace ember::cpu
