#pragma once
// Fused scaled-dot-product attention on Vulkan (backends/vulkan/attention.cpp, shaders/attention.comp).
#include "backends/vulkan/kernels.hpp"
#include "engine/backend/sdpa_types.hpp"

namespace ember::vk {

SdpaForward<FloatT> sdpa_forward(const FloatT& q, const FloatT& k, const FloatT& v, const FloatT* bias,
                                 const SdpaOptions& o);
SdpaGrads<FloatT> sdpa_backward(const FloatT& q, const FloatT& k, const FloatT& v, const FloatT* bias,
                                const FloatT& out, const FloatT& lse, const FloatT& dout, const SdpaOptions& o);

}  // namespace ember::vk
