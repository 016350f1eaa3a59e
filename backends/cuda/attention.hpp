#pragma once
// Fused scaled-dot-product attention on CUDA (backends/cuda/attention.cu).
#include "backends/cuda/cuda_tensor.hpp"
#include "engine/backend/sdpa_types.hpp"

namespace ember::cuda {

SdpaForward<CudaTensor<float>> sdpa_forward(const CudaTensor<float>& q, const CudaTensor<float>& k,
                                            const CudaTensor<float>& v, const CudaTensor<float>* bias,
                                            const SdpaOptions& o);
SdpaGrads<CudaTensor<float>> sdpa_backward(const CudaTensor<float>& q, const CudaTensor<float>& k,
                                           const CudaTensor<float>& v, const CudaTensor<float>* bias,
                                           const CudaTensor<float>& out, const CudaTensor<float>& lse,
                                           const CudaTensor<float>& dout, const SdpaOptions& o);

}  // namespace ember::cuda
