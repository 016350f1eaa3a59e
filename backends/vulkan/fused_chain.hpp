#pragma once
// Fusion<Vulkan>'s kernels (engine/fusion/README.md): a recorded chain of elementwise ops (fusion::Program) runs as
// one compute shader generated for it at run time (fused_chain_glsl.cpp), compiled with glslang
// (fused_chain_compile.cpp) and cached per context by the program's structure (fused_chain.cpp): each input read
// once, one store of the output, or with a trailing sum / mean per-workgroup partials instead of the output.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "backends/vulkan/vulkan_tensor.hpp"
#include "engine/fusion/operand.hpp"

namespace ember::vk {

class Context;

using FusedOperand = fusion::Operand<VulkanTensor<float>, VulkanTensor<int64_t>, VulkanTensor<uint32_t>>;

// The program's result (its output, or the [1] sum / mean with Program::reduce_all) on the inputs' context
// (`device` for a program without inputs).
VulkanTensor<float> fused_chain(const fusion::Program& p, const std::vector<FusedOperand>& inputs,
                                const std::shared_ptr<Context>& device);

// Pipelines kept per context by default; the least recently used one goes beyond the limit (commands that still
// use it keep it alive until they have executed). set_max_fused_pipelines changes a context's limit (tests).
inline constexpr std::size_t kMaxFusedPipelines = 64;
void set_max_fused_pipelines(Context& ctx, std::size_t limit);

struct FusedChainStats {
  uint64_t compiled = 0;  // programs compiled to a pipeline (cache misses)
  uint64_t hits = 0;      // runs that found their pipeline cached
  uint64_t evicted = 0;   // pipelines dropped to stay within kMaxFusedPipelines
  uint64_t split = 0;     // programs over the bindings, run as several kernels (fused_chain_split.hpp)
  uint64_t unfused = 0;   // programs run op by op (fusion::replay): over the push-constant words
  std::size_t cached = 0;
};
FusedChainStats fused_chain_stats(Context& ctx);

}  // namespace ember::vk
