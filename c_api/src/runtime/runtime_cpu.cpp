// libember's builtin runtime: the CPU backend (the row of backends/backend_list.hpp marked builtin), compiled with
// EMBER_RUNTIME_BACKEND=Cpu like the ops files it instantiates.
#include "c_api/src/runtime/plugin_loader.hpp"
#include "c_api/src/runtime/runtime_impl.hpp"

namespace ember::capi {

template const BackendRuntime& runtime_instance<RuntimeBackend>();

const BackendRuntime& builtin_runtime() { return runtime_instance<RuntimeBackend>(); }

}  // namespace ember::capi
