// libember's float64 CPU runtime: the same ops as runtime_cpu.cpp over Autodiff<Cpu<double>>, compiled with
// EMBER_RUNTIME_CPU_F64 (runtime_backend.hpp). Float tensors created as EMBER_DTYPE_F64 live here and compute,
// differentiate and accumulate gradients in double.
#include "c_api/src/runtime/plugin_loader.hpp"
#include "c_api/src/runtime/runtime_impl.hpp"

namespace ember::capi {

template const BackendRuntime& runtime_instance<RuntimeBackend>();

const BackendRuntime& cpu_f64_runtime() { return runtime_instance<RuntimeBackend>(); }

}  // namespace ember::capi
