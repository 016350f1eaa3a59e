#include "backends/vulkan/vk_functions.hpp"

#include <cstring>
#include <string>

#include "backends/vulkan/vk_check.hpp"

namespace ember::vk {

void Functions::load_global(PFN_vkGetInstanceProcAddr gipa) {
#define EMBER_VK_LOAD(name)                                                                          \
  name = reinterpret_cast<PFN_vk##name>(gipa(VK_NULL_HANDLE, "vk" #name));                           \
  if (!name) throw VulkanError("the Vulkan loader's vkGetInstanceProcAddr has no vk" #name);
  EMBER_VK_GLOBAL_FUNCTIONS(EMBER_VK_LOAD)
#undef EMBER_VK_LOAD
}

void Functions::load_instance(PFN_vkGetInstanceProcAddr gipa, VkInstance instance) {
#define EMBER_VK_LOAD(name) name = reinterpret_cast<PFN_vk##name>(gipa(instance, "vk" #name));
  EMBER_VK_INSTANCE_FUNCTIONS(EMBER_VK_LOAD)
#undef EMBER_VK_LOAD
  if (!EnumeratePhysicalDevices || !CreateDevice || !GetDeviceProcAddr)
    throw VulkanError("vkGetInstanceProcAddr returned no core instance functions (wrong instance or loader?)");
}

void Functions::load_device(VkDevice device) {
  // The timeline-semaphore entry points are core in Vulkan 1.2 and VK_KHR_timeline_semaphore's (*KHR) in 1.1; a
  // device adopted without timeline semaphores (Vulkan 1.1, issue 17's feature floor) may have neither: they stay
  // null there (Context::timeline_semaphores() is false). Everything else is core 1.0 / 1.1.
  auto load = [&](const char* name) -> PFN_vkVoidFunction {
    const std::string core = std::string("vk") + name;
    if (PFN_vkVoidFunction f = GetDeviceProcAddr(device, core.c_str())) return f;
    const bool timeline =
        std::strcmp(name, "GetSemaphoreCounterValue") == 0 || std::strcmp(name, "WaitSemaphores") == 0;
    if (!timeline) throw VulkanError("vkGetDeviceProcAddr: " + core + " is missing (Vulkan 1.1 device required)");
    return GetDeviceProcAddr(device, (core + "KHR").c_str());
  };
#define EMBER_VK_LOAD(name) name = reinterpret_cast<PFN_vk##name>(load(#name));
  EMBER_VK_DEVICE_FUNCTIONS(EMBER_VK_LOAD)
#undef EMBER_VK_LOAD
}

}  // namespace ember::vk
