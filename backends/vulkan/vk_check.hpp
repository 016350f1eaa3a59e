#pragma once
// Vulkan results become ember errors (never aborts): VulkanError for API failures, OutOfMemoryError when the
// device or host runs out of memory, so callers (and the C ABI) can tell the two apart.
#include <vulkan/vulkan.h>

#include <string>

#include "engine/tensor/error.hpp"

namespace ember {

struct VulkanError : Error {
  using Error::Error;
};
struct DeviceOutOfMemory : VulkanError {
  using VulkanError::VulkanError;
};

namespace vk {

const char* result_name(VkResult r);

[[noreturn]] void throw_result(VkResult r, const char* call);

inline void check(VkResult r, const char* call) {
  if (r != VK_SUCCESS) throw_result(r, call);
}

}  // namespace vk
}  // namespace ember
