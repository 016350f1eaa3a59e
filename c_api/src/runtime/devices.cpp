// Devices of the runtime-dispatch layer, for any backend of backends/backend_list.hpp: counted, opened and named
// by the backend's runtime (libember's own, or its plugin's).
#include "c_api/src/runtime/plugin_loader.hpp"
#include "c_api/src/runtime/tensor_ops.hpp"

namespace ember::capi {

int32_t device_count(BackendId backend) {
  try {
    return runtime_for(backend).device_count();
  } catch (const UnsupportedError&) {
    return 0;  // not compiled, or its plugin cannot be loaded: ember_device_create says why
  }
}

DynDevice make_device(BackendId backend, int32_t index) { return runtime_for(backend).make_device(index); }

const DynDevice& cpu_device() {
  static const DynDevice* d = new DynDevice(builtin_runtime().make_device(0));
  return *d;
}

bool same_device(const DynDevice& a, const DynDevice& b) {
  // The CPU is one device, whether a handle came from the float32 or the float64 runtime.
  const auto cpu = [](const DynDevice& d) { return d.runtime == &builtin_runtime() || d.runtime == &cpu_f64_runtime(); };
  if (cpu(a) && cpu(b)) return true;
  return a.runtime && a.runtime == b.runtime && a.runtime->same_device(a, b);
}

std::string device_name(const DynDevice& d) {
  if (!d.runtime) throw ArgumentError("device: a device without a runtime");
  return d.runtime->device_name(d);
}

}  // namespace ember::capi
