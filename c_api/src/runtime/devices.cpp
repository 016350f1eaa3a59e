// Devices of the runtime-dispatch layer: counting, opening and naming them per backend.
#include "c_api/src/runtime/dyn.hpp"

namespace ember::capi {

int32_t device_count(BackendId backend) {
  switch (backend) {
    case BackendId::Cpu: return 1;
#if EMBER_HAS_VULKAN
    case BackendId::Vulkan: return vulkan_device_count();
#endif
    default: return 0;
  }
}

DynDevice make_device(BackendId backend, int32_t index) {
  switch (backend) {
    case BackendId::Cpu:
      if (index != 0) throw IndexError("device: cpu has one device (index 0), got " + std::to_string(index));
      return DynDevice{};
#if EMBER_HAS_VULKAN
    case BackendId::Vulkan: return vulkan_device(index);
#endif
    default: break;
  }
  throw UnsupportedError("device: backend " + std::to_string(static_cast<int32_t>(backend)) +
                         " is not compiled into this library");
}

bool same_device(const DynDevice& a, const DynDevice& b) {
  if (a.backend != b.backend) return false;
#if EMBER_HAS_VULKAN
  if (a.backend == BackendId::Vulkan) return a.vulkan.context == b.vulkan.context;
#endif
  return a.index == b.index;
}

std::string device_name(const DynDevice& d) {
  switch (d.backend) {
    case BackendId::Cpu: return "cpu";
#if EMBER_HAS_VULKAN
    case BackendId::Vulkan: {
      // Appended piecewise: GCC 12's -Wrestrict misfires on `"literal" + std::string&&`.
      std::string name = "vulkan";
      if (d.index < 0) {
        name += " (adopted)";
      } else {
        name += ':';
        name += std::to_string(d.index);
      }
      if (d.vulkan.context) {
        name += ' ';
        name += d.vulkan.name();
      }
      return name;
    }
#endif
    default: return "backend " + std::to_string(static_cast<int32_t>(d.backend));
  }
}

}  // namespace ember::capi
