// A plugin from "another build": it exports ember_backend_plugin but answers with interface version 0 and a foreign
// build stamp. plugin_loading_test.cpp installs it as libember-vulkan.so and expects libember to refuse it with
// UNSUPPORTED, naming the file. Only PluginInfo's frozen prefix (c_api/src/runtime/plugin_api.hpp) is spelled out:
// that is what any libember reads before trusting a plugin.
#include <cstdint>

namespace {

struct FrozenPluginInfo {
  uint32_t interface_version;
  const char* build_stamp;
  const void* runtime;
  const void* vulkan;
};

const FrozenPluginInfo kInfo{0, "a-foreign-build", nullptr, nullptr};

}  // namespace

extern "C" __attribute__((visibility("default"))) const FrozenPluginInfo* ember_backend_plugin(uint32_t,
                                                                                              const char*) {
  return &kInfo;
}
