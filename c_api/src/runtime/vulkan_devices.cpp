// Ember's own Vulkan devices for the C ABI: ember_device_create(EMBER_BACKEND_VULKAN, index) opens physical device
// `index` (enumeration order) once and every later call with that index shares the context, so tensors made
// through different device handles of one index can be used together.
#include <map>
#include <mutex>
#include <vector>

#include "backends/vulkan/context.hpp"
#include "c_api/src/runtime/vulkan_devices.hpp"

namespace ember::capi {
namespace {

struct Probe {
  int32_t count = 0;
  std::string why_none;  // why count is 0
};

Probe probe_devices() {
  Probe p;
  p.count = static_cast<int32_t>(vk::physical_device_count(&p.why_none));
  return p;
}

// Devices do not come and go while a process runs (hot-plugged GPUs are not supported), so one probe suffices.
const Probe& probe() {
  static const Probe p = probe_devices();
  return p;
}

// Contexts by index. Leaked on purpose, like the handle registry: a host may free handles during static
// destruction, and destroying a VkDevice after the loader or the driver has been unloaded would crash.
std::mutex& contexts_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::map<int32_t, std::shared_ptr<vk::Context>>& contexts() {
  static auto* c = new std::map<int32_t, std::shared_ptr<vk::Context>>;
  return *c;
}
// Contexts that were replaced after their device was lost, for vulkan_device_index while handles still hold them.
std::vector<std::pair<int32_t, std::weak_ptr<vk::Context>>>& lost_contexts() {
  static auto* c = new std::vector<std::pair<int32_t, std::weak_ptr<vk::Context>>>;
  return *c;
}

}  // namespace

int32_t vulkan_device_count() { return probe().count; }

VulkanDevice vulkan_device(int32_t index) {
  const Probe& p = probe();
  if (p.count == 0) throw UnsupportedError("vulkan: " + p.why_none);
  if (index < 0 || index >= p.count)
    throw IndexError("device: vulkan has " + std::to_string(p.count) + " device(s) (index 0.." +
                     std::to_string(p.count - 1) + "), got " + std::to_string(index));
  std::lock_guard lock(contexts_mutex());
  auto& ctx = contexts()[index];
  if (ctx && ctx->lost()) {
    // Recovery after a loss (ember.h, EMBER_ERR_DEVICE_LOST): a new context; the lost one lives on only as long as
    // the handles still made on it, and never serves a new device handle.
    std::erase_if(lost_contexts(), [](const auto& e) { return e.second.expired(); });
    lost_contexts().emplace_back(index, ctx);
    ctx.reset();
  }
  if (!ctx) {
    vk::ContextOptions options;
    options.device_index = index;
    try {
      ctx = std::make_shared<vk::Context>(options);
    } catch (const DeviceError& e) {
      // The device exists but cannot run Ember (no shaderInt64 / timelineSemaphore, Vulkan < 1.2, ...).
      contexts().erase(index);
      throw UnsupportedError(std::string("vulkan device ") + std::to_string(index) + " cannot be used: " + e.what());
    }
  }
  return VulkanDevice{ctx};
}

int32_t vulkan_device_index(const VulkanDevice& d) {
  std::lock_guard lock(contexts_mutex());
  for (const auto& [index, ctx] : contexts())
    if (ctx == d.context) return index;
  for (const auto& [index, ctx] : lost_contexts())
    if (ctx.lock() == d.context) return index;
  return -1;
}

}  // namespace ember::capi
