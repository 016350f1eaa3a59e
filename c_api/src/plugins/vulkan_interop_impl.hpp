#pragma once
// The Vulkan plugin's implementation of VulkanInterop (runtime/vulkan_interop.hpp).
#include "c_api/src/runtime/vulkan_interop.hpp"

namespace ember::capi {

const VulkanInterop& vulkan_interop_impl();

}  // namespace ember::capi
