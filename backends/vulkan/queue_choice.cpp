#include "backends/vulkan/queue_choice.hpp"

#include <cstdlib>
#include <cstring>

#include "backends/vulkan/vk_check.hpp"

namespace ember::vk {
namespace {

bool computes(const VkQueueFamilyProperties& f) { return (f.queueFlags & VK_QUEUE_COMPUTE_BIT) && f.queueCount > 0; }
bool compute_only(const VkQueueFamilyProperties& f) { return computes(f) && !(f.queueFlags & VK_QUEUE_GRAPHICS_BIT); }
bool universal(const VkQueueFamilyProperties& f) { return computes(f) && (f.queueFlags & VK_QUEUE_GRAPHICS_BIT); }

std::string families_text(std::span<const VkQueueFamilyProperties> families) {
  std::string s;
  for (std::size_t i = 0; i < families.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(i) + ": " + queue_flags_text(families[i].queueFlags) + " x" +
         std::to_string(families[i].queueCount);
  }
  return s.empty() ? "none" : s;
}

int first(std::span<const VkQueueFamilyProperties> families, bool (*fits)(const VkQueueFamilyProperties&)) {
  for (std::size_t i = 0; i < families.size(); ++i)
    if (fits(families[i])) return static_cast<int>(i);
  return -1;
}

}  // namespace

std::string queue_flags_text(VkQueueFlags flags) {
  std::string s;
  auto add = [&](VkQueueFlags bit, const char* name) {
    if (!(flags & bit)) return;
    if (!s.empty()) s += "|";
    s += name;
  };
  add(VK_QUEUE_GRAPHICS_BIT, "graphics");
  add(VK_QUEUE_COMPUTE_BIT, "compute");
  add(VK_QUEUE_TRANSFER_BIT, "transfer");
  add(VK_QUEUE_SPARSE_BINDING_BIT, "sparse");
  return s.empty() ? "no flags" : s;
}

QueueChoice choose_queue(std::span<const VkQueueFamilyProperties> families, QueuePreference preference, int family,
                         uint32_t index) {
  int chosen = -1;
  if (family >= 0) {
    if (static_cast<std::size_t>(family) >= families.size() || !computes(families[static_cast<std::size_t>(family)]))
      throw VulkanError("vulkan: queue family " + std::to_string(family) +
                             " does not exist or cannot run compute work (families: " + families_text(families) + ")");
    chosen = family;
  } else if (preference == QueuePreference::Universal) {
    chosen = first(families, universal);
    if (chosen < 0) chosen = first(families, computes);
  } else {
    chosen = first(families, compute_only);
    if (chosen < 0 && preference == QueuePreference::RequireAsyncCompute)
      throw VulkanError("vulkan: the device has no compute-only (async compute) queue family (families: " +
                             families_text(families) + "); EMBER_VULKAN_QUEUE=async takes a universal one instead");
    if (chosen < 0) chosen = first(families, computes);
  }
  if (chosen < 0)
    throw VulkanError("vulkan: the device has no compute queue (families: " + families_text(families) + ")");
  const auto& f = families[static_cast<std::size_t>(chosen)];
  if (index >= f.queueCount)
    throw VulkanError("vulkan: queue index " + std::to_string(index) + " of family " + std::to_string(chosen) +
                           " does not exist (it has " + std::to_string(f.queueCount) + " queue(s))");
  return {static_cast<uint32_t>(chosen), index};
}

void apply_queue_env(QueuePreference& preference, int& family, uint32_t& index) {
  const char* v = std::getenv("EMBER_VULKAN_QUEUE");
  if (!v || !*v) return;
  if (std::strcmp(v, "async") == 0) {
    preference = QueuePreference::AsyncCompute;
    family = -1;
    return;
  }
  if (std::strcmp(v, "universal") == 0) {
    preference = QueuePreference::Universal;
    family = -1;
    return;
  }
  if (std::strcmp(v, "async-only") == 0) {
    preference = QueuePreference::RequireAsyncCompute;
    family = -1;
    return;
  }
  char* end = nullptr;
  const long f = std::strtol(v, &end, 10);
  long q = 0;
  bool ok = end != v && f >= 0 && f < 1024;
  if (ok && *end == ':') {
    const char* rest = end + 1;
    q = std::strtol(rest, &end, 10);
    ok = end != rest && q >= 0 && q < 1024;
  }
  if (!ok || *end != '\0')
    throw ArgumentError(std::string("EMBER_VULKAN_QUEUE=") + v +
                        ": expected async, universal, async-only, <family> or <family>:<index>");
  family = static_cast<int>(f);
  index = static_cast<uint32_t>(q);
}

}  // namespace ember::vk
