// Loading the GPU backends' plugins (model: ggml's backend registry). A plugin is libember-<name>.so, looked for
// first in the directory libember itself was loaded from (dladdr: installed side by side, and the build tree's
// c_api/ for the tests), then in each directory of EMBER_PLUGIN_PATH (colon-separated). It is opened with
// RTLD_NOW | RTLD_LOCAL on first use of its backend, so a process that only uses the CPU maps no GPU library, and
// a plugin's symbols (its copy of the engine) never mix with libember's.
#include "c_api/src/runtime/plugin_loader.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>

#include "c_api/src/runtime/backend_runtime.hpp"
#include "c_api/src/runtime/plugin_api.hpp"
#include "c_api/src/runtime/tensor_ops.hpp"

namespace ember::capi {
namespace {

struct Slot {
  bool tried = false;
  const PluginInfo* info = nullptr;  // set when loaded and accepted
  std::string error;                 // why not, when tried and failed
};

// One slot per kBackends row. Leaked on purpose, like the handle registry: handles freed during static
// destruction may still reach a runtime.
std::mutex& slots_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::array<Slot, kBackends.size()>& slots() {
  static auto* s = new std::array<Slot, kBackends.size()>;
  return *s;
}

std::size_t row_of(BackendId backend) {
  for (std::size_t i = 0; i < kBackends.size(); ++i)
    if (kBackends[i].id == backend) return i;
  throw ArgumentError(fmt::format("unknown backend {}", static_cast<int32_t>(backend)));
}

// Where libember.so itself lives: plugins are installed (and built) next to it.
std::filesystem::path own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&own_directory), &info) == 0 || !info.dli_fname) return {};
  return std::filesystem::path(info.dli_fname).parent_path();
}

std::vector<std::filesystem::path> search_path() {
  std::vector<std::filesystem::path> dirs;
  if (auto own = own_directory(); !own.empty()) dirs.push_back(own);
  if (const char* env = std::getenv("EMBER_PLUGIN_PATH")) {
    std::string_view rest = env;
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      if (!dir.empty()) dirs.emplace_back(std::string(dir));
      rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
    }
  }
  return dirs;
}

// Opens `file` and asks its entry point for the runtime; on failure the error says which file and why.
const PluginInfo* open_plugin(const std::filesystem::path& file, BackendId backend, std::string& error) {
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    error = fmt::format("cannot load {}: {}", file.string(), why ? why : "dlopen failed");
    return nullptr;
  }
  // Never dlclose'd: tensors and modules hold code and data of the plugin until the process ends.
  auto entry = reinterpret_cast<PluginEntry>(dlsym(handle, kPluginEntryName));
  if (!entry) {
    error = fmt::format("{} is not an Ember plugin (no {} entry point)", file.string(), kPluginEntryName);
    return nullptr;
  }
  const PluginInfo* info = entry(kPluginInterfaceVersion, kBuildStamp);
  if (!info || !info->runtime) {
    error = fmt::format(
        "{} is from another build (plugin interface {}, build {}; this libember: interface {}, build {})",
        file.string(), info ? info->interface_version : 0, info && info->build_stamp ? info->build_stamp : "?",
        kPluginInterfaceVersion, kBuildStamp);
    return nullptr;
  }
  if (info->runtime->id() != backend) {
    error = fmt::format("{} is the plugin of backend {}, not {}", file.string(),
                        static_cast<int32_t>(info->runtime->id()), static_cast<int32_t>(backend));
    return nullptr;
  }
  return info;
}

std::optional<uint64_t>& last_seed() {
  static std::optional<uint64_t> seed;
  return seed;
}

const PluginInfo& plugin(BackendId backend) {
  const BackendInfo& row = kBackends[row_of(backend)];
  if (!row.compiled) throw UnsupportedError(fmt::format("backend {} is not compiled into this library", row.name));
  std::lock_guard lock(slots_mutex());
  Slot& slot = slots()[row_of(backend)];
  if (!slot.tried) {
    slot.tried = true;
    const std::string name = fmt::format("libember-{}.so", row.name);
    const auto dirs = search_path();
    std::string looked;
    for (const auto& dir : dirs) {
      const auto file = dir / name;
      std::error_code ec;
      if (!std::filesystem::exists(file, ec)) {
        looked += looked.empty() ? dir.string() : ", " + dir.string();
        continue;
      }
      slot.info = open_plugin(file, backend, slot.error);
      break;
    }
    if (!slot.info && slot.error.empty())
      slot.error = fmt::format("{} not found (looked in: {}; set EMBER_PLUGIN_PATH to its directory)", name,
                               looked.empty() ? "no directory" : looked);
    // A plugin loaded after ember_seed continues from the same seed, so results do not depend on when it loaded.
    if (slot.info && last_seed()) slot.info->runtime->seed(*last_seed());
  }
  if (!slot.info) throw UnsupportedError(fmt::format("backend {}: {}", row.name, slot.error));
  return *slot.info;
}

}  // namespace

const BackendRuntime& runtime_for(BackendId backend) {
  const BackendInfo& row = kBackends[row_of(backend)];
  if (row.builtin) {
    const BackendRuntime& builtin = builtin_runtime();
    if (builtin.id() != backend)  // the list marks one builtin backend, libember's own runtime
      throw UnsupportedError(fmt::format("backend {} is marked builtin but libember's runtime is another", row.name));
    return builtin;
  }
  return *plugin(backend).runtime;
}

std::vector<const BackendRuntime*> loaded_runtimes() {
  std::vector<const BackendRuntime*> out{&builtin_runtime()};
  std::lock_guard lock(slots_mutex());
  for (const Slot& s : slots())
    if (s.info) out.push_back(s.info->runtime);
  return out;
}

void seed_all(uint64_t seed) {
  {
    std::lock_guard lock(slots_mutex());
    last_seed() = seed;
  }
  for (const BackendRuntime* runtime : loaded_runtimes()) runtime->seed(seed);
}

const VulkanInterop& vulkan_interop() {
  const PluginInfo& p = plugin(BackendId::Vulkan);
  if (!p.vulkan) throw UnsupportedError("backend vulkan: its plugin has no interop interface");
  return *p.vulkan;
}

}  // namespace ember::capi
