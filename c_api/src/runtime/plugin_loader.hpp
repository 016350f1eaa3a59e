#pragma once
// The runtimes of libember: the builtin CPU runtime and the GPU plugins, loaded on first use of their backend
// (plugin_loader.cpp). Everything that enumerates backends goes through backends/backend_list.hpp's kBackends.
#include <vector>

#include "c_api/src/runtime/dyn.hpp"

namespace ember::capi {

class VulkanInterop;

// The runtime compiled into libember (runtime_cpu.cpp), and its float64 twin (runtime_cpu_f64.cpp), which holds
// the tensors of EMBER_DTYPE_F64 (dispatch.cpp routes creation by dtype and promotes mixed operands).
const BackendRuntime& builtin_runtime();
const BackendRuntime& cpu_f64_runtime();

// The runtime of `backend`, loading its plugin on first use. Throws ArgumentError for an unknown id and
// UnsupportedError when the backend is not compiled or its plugin cannot be loaded (the message names the file and
// the reason; a failed load is remembered, not retried).
const BackendRuntime& runtime_for(BackendId backend);
// The runtimes loaded so far (the builtin one first).
std::vector<const BackendRuntime*> loaded_runtimes();
// The Vulkan plugin's interop (loads it); UnsupportedError as runtime_for.
const VulkanInterop& vulkan_interop();

}  // namespace ember::capi
