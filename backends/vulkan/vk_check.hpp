#pragma once
// Vulkan results become ember errors (never aborts): VulkanError for API failures, DeviceOutOfMemory when the
// device or host runs out of memory, DeviceLost for VK_ERROR_DEVICE_LOST, so callers can tell them apart. They
// derive from the engine's DeviceError / OutOfMemoryError / DeviceLostError (engine/tensor/error.hpp), which is
// all the C ABI needs to know of them. A context that sees a loss remembers it (Context::check, device_lost.hpp).
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
struct DeviceLost : DeviceLostError {
  using DeviceLostError::DeviceLostError;
};

namespace vk {

const char* result_name(VkResult r);

[[noreturn]] void throw_result(VkResult r, const char* call);

inline void check(VkResult r, const char* call) {
  if (r != VK_SUCCESS) throw_result(r, call);
}

}  // namespace vk
}  // namespace ember
