#include "backends/vulkan/loader.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "backends/vulkan/vk_check.hpp"

namespace ember::vk {
namespace {

constexpr const char* kLoaderName = "libvulkan.so.1";

// Opened once; the handle is never closed (drivers keep threads and atexit handlers that outlive any caller).
struct Loader {
  void* handle = nullptr;
  std::string error;  // why handle is null

  Loader() {
    const char* name = std::getenv("EMBER_VULKAN_LOADER");
    if (!name || !*name) name = kLoaderName;
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      error = fmt::format("{} not found: install the Vulkan loader (Debian: libvulkan1) ({})", name,
                          why ? why : "dlopen failed");
    }
  }
};

const Loader& loader() {
  static const Loader instance;  // C++11 magic statics: opened exactly once even under concurrent first use
  return instance;
}

}  // namespace

void* loader_symbol(const char* name) {
  const Loader& l = loader();
  if (!l.handle) throw VulkanError(l.error);
  void* sym = dlsym(l.handle, name);
  if (!sym) throw VulkanError(fmt::format("the Vulkan loader exports no {} (a Vulkan 1.2 loader is required)", name));
  return sym;
}

PFN_vkGetInstanceProcAddr loader_get_instance_proc_addr() {
  static const auto gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(loader_symbol("vkGetInstanceProcAddr"));
  return gipa;
}

}  // namespace ember::vk
