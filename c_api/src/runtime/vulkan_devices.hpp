#pragma once
// Vulkan devices of the C ABI (vulkan_devices.cpp): numbered by the physical device in enumeration order; each
// number maps to one cached context, and a device adopted from the host (ember_vulkan_device_adopt) has index -1.
#include <string>

#include "backends/vulkan/vulkan_backend.hpp"
#include "c_api/src/runtime/dyn.hpp"

namespace ember::capi {

int32_t vulkan_device_count();
VulkanDevice vulkan_device(int32_t index);
int32_t vulkan_device_index(const VulkanDevice& d);  // -1 for an adopted device

template <class Inner>
struct DeviceGlue;

template <>
struct DeviceGlue<Vulkan> {
  static int32_t count() { return vulkan_device_count(); }
  static VulkanDevice open(int32_t index) { return vulkan_device(index); }
  static int32_t index_of(const VulkanDevice& d) { return vulkan_device_index(d); }
  static std::string name(const VulkanDevice& d, int32_t index) {
    // Appended piecewise: GCC 12's -Wrestrict misfires on `"literal" + std::string&&`.
    std::string name = "vulkan";
    if (index < 0) {
      name += " (adopted)";
    } else {
      name += ':';
      name += std::to_string(index);
    }
    if (d.context) {
      name += ' ';
      name += d.name();
    }
    return name;
  }
};

}  // namespace ember::capi
