// libember-cuda.so's entry point: the CUDA runtime (RuntimeImpl<Autodiff<Cuda>>, compiled here with
// EMBER_RUNTIME_BACKEND=Cuda like the ops files it instantiates). CUDA has no interop functions in ember.h yet.
#include "c_api/src/runtime/plugin_api.hpp"
#include "c_api/src/runtime/runtime_impl.hpp"

namespace ember::capi {

template const BackendRuntime& runtime_instance<RuntimeBackend>();

}  // namespace ember::capi

EMBER_PLUGIN_ENTRY(uint32_t host_interface_version, const char* host_build_stamp) {
  using namespace ember::capi;
  return plugin_info(runtime_instance<RuntimeBackend>(), nullptr, host_interface_version, host_build_stamp);
}
