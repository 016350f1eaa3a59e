#pragma once
// The contract between libember and a backend plugin (libember-<name>.so): one extern "C" entry point,
// ember_backend_plugin, which checks libember's interface version and build stamp and returns the plugin's
// BackendRuntime (and, for Vulkan, the interop behind the ember_vulkan_* functions).
//
// The runtime interface passes C++ types, so a plugin only works with the libember of its own build: the interface
// version is bumped with any change to BackendRuntime / VulkanInterop, and the build stamp (meson:
// EMBER_BUILD_STAMP: version, compiler and build type) rules out mixing builds. PluginInfo's first two fields are
// frozen, so any libember can read them and say why a plugin does not fit.
#include <cstdint>
#include <cstring>

#include "c_api/src/runtime/dyn.hpp"

#ifndef EMBER_BUILD_STAMP
#error "EMBER_BUILD_STAMP must be set (meson) for libember's plugin loader and the plugins"
#endif

namespace ember::capi {

class VulkanInterop;

// 11: the runtime op `dropout` (issue 14); 10: `adam_step`; 9: f16 variants (float16_variants, plan_f16_weights),
// timeline_semaphores (issue 17 part 6);
// 8: plans own deferred checks (ember_vulkan_plan_poll_errors); 7: Vulkan plans and warm-up (issue 17 parts 2, 7); 6: memory the host controls, resource states (parts 4, 5);
// 5: the runtime op `select` (issue 11's x[i]); 4: device lost, readback ring, queue info (part 8)
inline constexpr uint32_t kPluginInterfaceVersion = 11;
inline constexpr const char* kPluginEntryName = "ember_backend_plugin";
inline constexpr const char* kBuildStamp = EMBER_BUILD_STAMP;

struct PluginInfo {
  uint32_t interface_version;  // frozen: the plugin's kPluginInterfaceVersion
  const char* build_stamp;     // frozen: the plugin's kBuildStamp
  // Set only when the plugin accepted the host's version and stamp:
  const BackendRuntime* runtime;
  const VulkanInterop* vulkan;  // the Vulkan plugin's interop; nullptr for other backends
};

using PluginEntry = const PluginInfo* (*)(uint32_t host_interface_version, const char* host_build_stamp);

// What a plugin's entry point returns: its runtime when the host is of the same build, else only the frozen fields
// (the host then reports the mismatch).
inline const PluginInfo* plugin_info(const BackendRuntime& runtime, const VulkanInterop* vulkan,
                                     uint32_t host_interface_version, const char* host_build_stamp) {
  static const PluginInfo accepted{kPluginInterfaceVersion, kBuildStamp, &runtime, vulkan};
  static const PluginInfo refused{kPluginInterfaceVersion, kBuildStamp, nullptr, nullptr};
  const bool same = host_interface_version == kPluginInterfaceVersion && host_build_stamp &&
                    std::strcmp(host_build_stamp, kBuildStamp) == 0;
  return same ? &accepted : &refused;
}

}  // namespace ember::capi

// Exported by each plugin (and nothing else: c_api/abi/check_plugin_exports.sh).
#define EMBER_PLUGIN_ENTRY \
  extern "C" __attribute__((visibility("default"))) const ember::capi::PluginInfo* ember_backend_plugin
