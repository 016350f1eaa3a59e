#pragma once
// How the C ABI numbers, opens and names the devices of each backend: DeviceGlue<Inner> for each backend Inner of
// backends/registry.hpp, specialized in <name>_devices.hpp and seen only by the runtime built for that backend
// (libember for the CPU, the backend's plugin for a GPU). BackendTraits<B> derives the rest for B = Autodiff<Inner>.
#include <memory>
#include <string>

#include "backends/registry.hpp"
#include "c_api/src/runtime/dyn.hpp"

namespace ember::capi {

// Specializations provide:
//   static int32_t count();                                        // devices usable here; never throws
//   static typename Inner::Device open(int32_t index);             // IndexError / UnsupportedError
//   static int32_t index_of(const typename Inner::Device& d);      // -1: a device Ember did not number (adopted)
//   static std::string name(const typename Inner::Device& d, int32_t index);  // "cpu", "vulkan:0 llvmpipe ..."
template <class Inner>
struct DeviceGlue;

}  // namespace ember::capi

#include "c_api/src/runtime/cpu_devices.hpp"
#if EMBER_HAS_VULKAN
#include "c_api/src/runtime/vulkan_devices.hpp"
#endif
#if EMBER_HAS_CUDA
#include "c_api/src/runtime/cuda_devices.hpp"
#endif

namespace ember::capi {

template <class B>
const BackendRuntime& runtime_instance();

// B = Autodiff<Inner>: its id and name from backends/backend_list.hpp, and the conversions between a DynDevice
// and B's own Device (held by the DynDevice, which only B's runtime makes and reads).
template <class B>
struct BackendTraits {
  using Inner = typename B::InnerBackend;
  using Glue = DeviceGlue<Inner>;
  static constexpr BackendId id = backend_info_of<Inner>().id;
  static constexpr const char* name = backend_info_of<Inner>().name.data();  // a NUL-terminated literal

  static const typename B::Device& device(const DynDevice& d) {
    return *static_cast<const typename B::Device*>(d.native.get());
  }
  static DynDevice dyn_device(const typename B::Device& d) {
    return DynDevice{id, Glue::index_of(d), &runtime_instance<B>(), std::make_shared<const typename B::Device>(d)};
  }
};

}  // namespace ember::capi

// issue 14: ember_compile's capture runtime (EMBER_RUNTIME_CPU_CAPTURE, runtime_backend.hpp) runs on the CPU's
// devices: Capture<Cpu<float>> has Cpu<float>'s id, name and device glue.
#if defined(EMBER_RUNTIME_CPU_CAPTURE)
#include "engine/compile/capture_backend.hpp"
namespace ember::capi {
template <>
struct BackendTraits<Autodiff<Capture<Cpu<float>>>> {
  using B = Autodiff<Capture<Cpu<float>>>;
  using Inner = Capture<Cpu<float>>;
  using Glue = DeviceGlue<Cpu<float>>;
  static constexpr BackendId id = backend_info_of<Cpu<float>>().id;
  static constexpr const char* name = backend_info_of<Cpu<float>>().name.data();

  static const typename B::Device& device(const DynDevice& d) {
    return *static_cast<const typename B::Device*>(d.native.get());
  }
  static DynDevice dyn_device(const typename B::Device& d) {
    return DynDevice{id, Glue::index_of(d), &runtime_instance<B>(), std::make_shared<const typename B::Device>(d)};
  }
};
}  // namespace ember::capi
#endif
