#pragma once
// The Vulkan loader (libvulkan.so.1), opened with dlopen on first use instead of linked: a program that links
// Ember's Vulkan backend starts, and maps no Vulkan library, until it actually creates a Vulkan context; a
// machine without the loader gets a VulkanError naming the package instead of a failure to start.
//
// EMBER_VULKAN_LOADER overrides the file name (a test points it at a missing file to check the message).
#include <vulkan/vulkan.h>

namespace ember::vk {

// The loader's vkGetInstanceProcAddr. The library is opened once per process (thread-safe); throws VulkanError
// ("libvulkan.so.1 not found: install the Vulkan loader (Debian: libvulkan1)") when it cannot be opened.
PFN_vkGetInstanceProcAddr loader_get_instance_proc_addr();

// An entry point the loader exports by name (its dispatching trampolines, what linking libvulkan would bind);
// throws VulkanError when the loader is missing or lacks the symbol.
void* loader_symbol(const char* name);

}  // namespace ember::vk
