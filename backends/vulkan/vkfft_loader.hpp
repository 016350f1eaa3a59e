#pragma once
// VkFFT (header-only) calls Vulkan entry points by their global names (vkCreateBuffer(...)), which would need
// libvulkan linked. Included right before vkFFT.h, this header turns each of those names into a call through a
// pointer that the loader (loader.hpp, opened with dlopen) exports under the same name: the same trampolines
// linking would bind, so VkFFT reaches the driver exactly as before.
//
// The list is what VkFFT 1.2.x calls. When a VkFFT update calls another one, the link fails with an undefined
// vkXxx: add it here.
#include <vulkan/vulkan.h>

namespace ember::vk {

#define EMBER_VKFFT_FUNCTIONS(X) \
  X(AllocateCommandBuffers) \
  X(AllocateDescriptorSets) \
  X(AllocateMemory) \
  X(BeginCommandBuffer) \
  X(BindBufferMemory) \
  X(CmdBindDescriptorSets) \
  X(CmdBindPipeline) \
  X(CmdCopyBuffer) \
  X(CmdDispatch) \
  X(CmdPipelineBarrier) \
  X(CmdPushConstants) \
  X(CreateBuffer) \
  X(CreateComputePipelines) \
  X(CreateDescriptorPool) \
  X(CreateDescriptorSetLayout) \
  X(CreatePipelineLayout) \
  X(CreateShaderModule) \
  X(DestroyBuffer) \
  X(DestroyDescriptorPool) \
  X(DestroyDescriptorSetLayout) \
  X(DestroyPipeline) \
  X(DestroyPipelineLayout) \
  X(DestroyShaderModule) \
  X(EndCommandBuffer) \
  X(FreeCommandBuffers) \
  X(FreeMemory) \
  X(GetBufferMemoryRequirements) \
  X(GetPhysicalDeviceMemoryProperties) \
  X(GetPhysicalDeviceProperties) \
  X(MapMemory) \
  X(QueueSubmit) \
  X(ResetFences) \
  X(UnmapMemory) \
  X(UpdateDescriptorSets) \
  X(WaitForFences)

struct VkfftFunctions {
#define EMBER_VK_MEMBER(name) PFN_vk##name name = nullptr;
  EMBER_VKFFT_FUNCTIONS(EMBER_VK_MEMBER)
#undef EMBER_VK_MEMBER
};

// Resolved once, on first use (after a Context exists, so the loader is there); throws VulkanError otherwise.
const VkfftFunctions& vkfft_functions();

}  // namespace ember::vk

#define vkAllocateCommandBuffers (::ember::vk::vkfft_functions().AllocateCommandBuffers)
#define vkAllocateDescriptorSets (::ember::vk::vkfft_functions().AllocateDescriptorSets)
#define vkAllocateMemory (::ember::vk::vkfft_functions().AllocateMemory)
#define vkBeginCommandBuffer (::ember::vk::vkfft_functions().BeginCommandBuffer)
#define vkBindBufferMemory (::ember::vk::vkfft_functions().BindBufferMemory)
#define vkCmdBindDescriptorSets (::ember::vk::vkfft_functions().CmdBindDescriptorSets)
#define vkCmdBindPipeline (::ember::vk::vkfft_functions().CmdBindPipeline)
#define vkCmdCopyBuffer (::ember::vk::vkfft_functions().CmdCopyBuffer)
#define vkCmdDispatch (::ember::vk::vkfft_functions().CmdDispatch)
#define vkCmdPipelineBarrier (::ember::vk::vkfft_functions().CmdPipelineBarrier)
#define vkCmdPushConstants (::ember::vk::vkfft_functions().CmdPushConstants)
#define vkCreateBuffer (::ember::vk::vkfft_functions().CreateBuffer)
#define vkCreateComputePipelines (::ember::vk::vkfft_functions().CreateComputePipelines)
#define vkCreateDescriptorPool (::ember::vk::vkfft_functions().CreateDescriptorPool)
#define vkCreateDescriptorSetLayout (::ember::vk::vkfft_functions().CreateDescriptorSetLayout)
#define vkCreatePipelineLayout (::ember::vk::vkfft_functions().CreatePipelineLayout)
#define vkCreateShaderModule (::ember::vk::vkfft_functions().CreateShaderModule)
#define vkDestroyBuffer (::ember::vk::vkfft_functions().DestroyBuffer)
#define vkDestroyDescriptorPool (::ember::vk::vkfft_functions().DestroyDescriptorPool)
#define vkDestroyDescriptorSetLayout (::ember::vk::vkfft_functions().DestroyDescriptorSetLayout)
#define vkDestroyPipeline (::ember::vk::vkfft_functions().DestroyPipeline)
#define vkDestroyPipelineLayout (::ember::vk::vkfft_functions().DestroyPipelineLayout)
#define vkDestroyShaderModule (::ember::vk::vkfft_functions().DestroyShaderModule)
#define vkEndCommandBuffer (::ember::vk::vkfft_functions().EndCommandBuffer)
#define vkFreeCommandBuffers (::ember::vk::vkfft_functions().FreeCommandBuffers)
#define vkFreeMemory (::ember::vk::vkfft_functions().FreeMemory)
#define vkGetBufferMemoryRequirements (::ember::vk::vkfft_functions().GetBufferMemoryRequirements)
#define vkGetPhysicalDeviceMemoryProperties (::ember::vk::vkfft_functions().GetPhysicalDeviceMemoryProperties)
#define vkGetPhysicalDeviceProperties (::ember::vk::vkfft_functions().GetPhysicalDeviceProperties)
#define vkMapMemory (::ember::vk::vkfft_functions().MapMemory)
#define vkQueueSubmit (::ember::vk::vkfft_functions().QueueSubmit)
#define vkResetFences (::ember::vk::vkfft_functions().ResetFences)
#define vkUnmapMemory (::ember::vk::vkfft_functions().UnmapMemory)
#define vkUpdateDescriptorSets (::ember::vk::vkfft_functions().UpdateDescriptorSets)
#define vkWaitForFences (::ember::vk::vkfft_functions().WaitForFences)
