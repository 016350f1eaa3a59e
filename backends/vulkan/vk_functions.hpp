#pragma once
// The Vulkan entry points Ember calls, loaded through a vkGetInstanceProcAddr (the loader's, opened with dlopen
// by loader.hpp, or the one a host application hands over with its own instance, see interop.hpp), so Ember works
// with whatever loader or layer chain the host set up and never links libvulkan. VkFFT calls the loader's exported
// symbols by name instead (vkfft_loader.hpp); both reach the same driver.
#include <vulkan/vulkan.h>

namespace ember::vk {

// Entry points that exist before any instance (vkGetInstanceProcAddr(NULL, ...)).
#define EMBER_VK_GLOBAL_FUNCTIONS(X)   \
  X(CreateInstance)                    \
  X(EnumerateInstanceLayerProperties)  \
  X(EnumerateInstanceExtensionProperties)

#define EMBER_VK_INSTANCE_FUNCTIONS(X)      \
  X(DestroyInstance)                        \
  X(EnumeratePhysicalDevices)               \
  X(GetPhysicalDeviceProperties)            \
  X(GetPhysicalDeviceProperties2)           \
  X(GetPhysicalDeviceFeatures2)             \
  X(GetPhysicalDeviceMemoryProperties)      \
  X(GetPhysicalDeviceQueueFamilyProperties) \
  X(EnumerateDeviceExtensionProperties)     \
  X(CreateDevice)                           \
  X(GetDeviceProcAddr)                      \
  X(CreateDebugUtilsMessengerEXT)           \
  X(DestroyDebugUtilsMessengerEXT)

#define EMBER_VK_DEVICE_FUNCTIONS(X) \
  X(DestroyDevice)                   \
  X(GetDeviceQueue)                  \
  X(DeviceWaitIdle)                  \
  X(QueueSubmit)                     \
  X(QueueWaitIdle)                   \
  X(AllocateMemory)                  \
  X(FreeMemory)                      \
  X(MapMemory)                       \
  X(UnmapMemory)                     \
  X(FlushMappedMemoryRanges)         \
  X(InvalidateMappedMemoryRanges)    \
  X(CreateBuffer)                    \
  X(DestroyBuffer)                   \
  X(BindBufferMemory)                \
  X(GetBufferMemoryRequirements)     \
  X(CreateShaderModule)              \
  X(DestroyShaderModule)             \
  X(CreatePipelineCache)             \
  X(DestroyPipelineCache)            \
  X(GetPipelineCacheData)            \
  X(CreateComputePipelines)          \
  X(DestroyPipeline)                 \
  X(CreatePipelineLayout)            \
  X(DestroyPipelineLayout)           \
  X(CreateDescriptorSetLayout)       \
  X(DestroyDescriptorSetLayout)      \
  X(CreateDescriptorPool)            \
  X(DestroyDescriptorPool)           \
  X(ResetDescriptorPool)             \
  X(AllocateDescriptorSets)          \
  X(UpdateDescriptorSets)            \
  X(CreateCommandPool)               \
  X(DestroyCommandPool)              \
  X(AllocateCommandBuffers)          \
  X(FreeCommandBuffers)              \
  X(BeginCommandBuffer)              \
  X(EndCommandBuffer)                \
  X(ResetCommandBuffer)              \
  X(CmdExecuteCommands)              \
  X(CmdBindPipeline)                 \
  X(CmdBindDescriptorSets)           \
  X(CmdPushConstants)                \
  X(CmdDispatch)                     \
  X(CmdPipelineBarrier)              \
  X(CmdCopyBuffer)                   \
  X(CmdFillBuffer)                   \
  X(CreateFence)                     \
  X(DestroyFence)                    \
  X(ResetFences)                     \
  X(WaitForFences)                   \
  X(GetFenceStatus)                  \
  X(CreateSemaphore)                 \
  X(DestroySemaphore)                \
  X(GetSemaphoreCounterValue)        \
  X(WaitSemaphores)

struct Functions {
#define EMBER_VK_MEMBER(name) PFN_vk##name name = nullptr;
  EMBER_VK_GLOBAL_FUNCTIONS(EMBER_VK_MEMBER)
  EMBER_VK_INSTANCE_FUNCTIONS(EMBER_VK_MEMBER)
  EMBER_VK_DEVICE_FUNCTIONS(EMBER_VK_MEMBER)
#undef EMBER_VK_MEMBER

  // The instance-independent entry points, to create an instance.
  void load_global(PFN_vkGetInstanceProcAddr gipa);
  // Instance-level entry points (debug-utils ones stay null when the extension is not enabled).
  void load_instance(PFN_vkGetInstanceProcAddr gipa, VkInstance instance);
  // Device-level entry points through vkGetDeviceProcAddr (skips the loader's per-call dispatch).
  void load_device(VkDevice device);
};

}  // namespace ember::vk
