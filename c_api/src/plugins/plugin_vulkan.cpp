// libember-vulkan.so's entry point: the Vulkan runtime (RuntimeImpl<Autodiff<Vulkan>>, compiled here with
// EMBER_RUNTIME_BACKEND=Vulkan like the ops files it instantiates) and the interop behind ember_vulkan_*.
#include "c_api/src/plugins/vulkan_interop_impl.hpp"
#include "c_api/src/runtime/plugin_api.hpp"
#include "c_api/src/runtime/runtime_impl.hpp"

namespace ember::capi {

template const BackendRuntime& runtime_instance<RuntimeBackend>();

}  // namespace ember::capi

EMBER_PLUGIN_ENTRY(uint32_t host_interface_version, const char* host_build_stamp) {
  using namespace ember::capi;
  return plugin_info(runtime_instance<RuntimeBackend>(), &vulkan_interop_impl(), host_interface_version,
                     host_build_stamp);
}
