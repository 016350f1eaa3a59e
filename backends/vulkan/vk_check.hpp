#pragma once
// Vulkan results become ember errors (never aborts): VulkanError for API failures, DeviceOutOfMemory when the
// device or host runs out of memory, so callers can tell the two apart. Both derive from the engine's DeviceError /
// OutOfMemoryError (engine/tensor/error.hpp), which is all the C ABI needs to know of them.
#include <vulkan/vulkan.h>

#include <string>

#include "engine/tensor/error.hpp"

namespace ember {

struct VulkanError : DeviceError {
  using DeviceError::DeviceError;
};
struct DeviceOutOfMemory : OutOfMemoryError {
  using OutOfMemoryError::OutOfMemoryError;
};

namespace vk {

const char* result_name(VkResult r);

[[noreturn]] void throw_result(VkResult r, const char* call);

inline void check(VkResult r, const char* call) {
  if (r != VK_SUCCESS) throw_result(r, call);
}

}  // namespace vk
}  // namespace ember
