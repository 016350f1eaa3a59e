// vkCreateInstance, vkEnumeratePhysicalDevices and vkDestroyInstance under their global names, forwarding to the
// dlopen'ed loader (loader.hpp). Code built on this library that names them directly (the C ABI's device probe,
// c_api/src/runtime/vulkan_devices.cpp) then links without libvulkan. Hidden: a program or library that links
// Ember never exports them, and one that links libvulkan itself reaches the same loader either way.
#include <vulkan/vulkan.h>

#include "backends/vulkan/loader.hpp"
#include "backends/vulkan/vk_check.hpp"

#define EMBER_VK_HIDDEN __attribute__((visibility("hidden")))

namespace {

template <class Pfn>
Pfn resolve(const char* name) {
  return reinterpret_cast<Pfn>(ember::vk::loader_symbol(name));
}

}  // namespace

extern "C" {

EMBER_VK_HIDDEN VKAPI_ATTR VkResult VKAPI_CALL vkCreateInstance(const VkInstanceCreateInfo* info,
                                                                const VkAllocationCallbacks* allocator,
                                                                VkInstance* instance) {
  try {
    static const auto f = resolve<PFN_vkCreateInstance>("vkCreateInstance");
    return f(info, allocator, instance);
  } catch (const ember::VulkanError&) {
    return VK_ERROR_INITIALIZATION_FAILED;  // no loader: the caller's "no Vulkan driver" path
  }
}

// Only reachable with an instance, so the loader is there: resolve cannot fail.
EMBER_VK_HIDDEN VKAPI_ATTR VkResult VKAPI_CALL vkEnumeratePhysicalDevices(VkInstance instance, uint32_t* count,
                                                                          VkPhysicalDevice* devices) {
  static const auto f = resolve<PFN_vkEnumeratePhysicalDevices>("vkEnumeratePhysicalDevices");
  return f(instance, count, devices);
}

EMBER_VK_HIDDEN VKAPI_ATTR void VKAPI_CALL vkDestroyInstance(VkInstance instance,
                                                             const VkAllocationCallbacks* allocator) {
  static const auto f = resolve<PFN_vkDestroyInstance>("vkDestroyInstance");
  f(instance, allocator);
}

}  // extern "C"
