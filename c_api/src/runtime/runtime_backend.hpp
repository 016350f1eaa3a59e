#pragma once
// The backend a runtime build unit is compiled for. meson sets EMBER_RUNTIME_BACKEND to its BackendId enumerator
// (Cpu for libember's own runtime, Vulkan / Cuda for the plugins); the ops and RuntimeImpl are instantiated for
// Autodiff of that backend's default configuration (backends/registry.hpp). libember compiles the ops twice for the
// CPU: once for float32 (the default) and once, with EMBER_RUNTIME_CPU_F64, for float64 tensors.
#include "backends/registry.hpp"

#ifndef EMBER_RUNTIME_BACKEND
#error "EMBER_RUNTIME_BACKEND (Cpu, Vulkan, Cuda) must be set for the runtime's build units"
#endif

namespace ember::capi {

#if defined(EMBER_RUNTIME_CPU_F64)
using RuntimeBackend = Autodiff<Cpu<double>>;
#elif !defined(EMBER_RUNTIME_CPU_CAPTURE)
using RuntimeBackend = Autodiff<typename BackendEntry<BackendId::EMBER_RUNTIME_BACKEND>::Default>;
#endif

}  // namespace ember::capi

// issue 14: ember_compile's capture runtime (runtime_cpu_capture.cpp, compiled with EMBER_RUNTIME_CPU_CAPTURE): CPU
// float32 ops that also record onto the thread's capture tape (engine/compile/capture_backend.hpp).
#if defined(EMBER_RUNTIME_CPU_CAPTURE)
#include "engine/compile/capture_backend.hpp"
namespace ember::capi {
using RuntimeBackend = Autodiff<Capture<Cpu<float>>>;
}  // namespace ember::capi
#endif
