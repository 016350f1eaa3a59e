#include "backends/vulkan/vk_functions.hpp"

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
#define EMBER_VK_LOAD(name)                                                              \
  name = reinterpret_cast<PFN_vk##name>(GetDeviceProcAddr(device, "vk" #name));          \
  if (!name) throw VulkanError("vkGetDeviceProcAddr: vk" #name " is missing (Vulkan 1.2 device required)");
  EMBER_VK_DEVICE_FUNCTIONS(EMBER_VK_LOAD)
#undef EMBER_VK_LOAD
}

}  // namespace ember::vk
