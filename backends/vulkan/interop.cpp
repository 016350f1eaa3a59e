#include "backends/vulkan/interop.hpp"

#include "backends/vulkan/commands.hpp"

namespace ember::vulkan {

VulkanDevice create(const ContextOptions& options) { return {std::make_shared<vk::Context>(options)}; }

VulkanDevice adopt(const ExternalDevice& external, const ContextOptions& options) {
  return {std::make_shared<vk::Context>(external, options)};
}

uint64_t submit(const VulkanDevice& dev) {
  auto ctx = dev.get();
  std::lock_guard lock(ctx->mutex());
  return ctx->stream().flush();
}

VkSemaphore timeline(const VulkanDevice& dev) {
  auto ctx = dev.get();
  if (!ctx->timeline_semaphores()) throw DeviceError(vk::kNoTimelineMessage);
  return ctx->stream().timeline();
}

void wait_for(const VulkanDevice& dev, VkSemaphore host_timeline, uint64_t value) {
  if (!host_timeline) throw ArgumentError("vulkan wait_for: null semaphore");
  auto ctx = dev.get();
  if (!ctx->timeline_semaphores()) throw DeviceError(vk::kNoTimelineMessage);
  std::lock_guard lock(ctx->mutex());
  ctx->stream().wait_for(host_timeline, value);
}

void host_wait(const VulkanDevice& dev, uint64_t value) {
  auto ctx = dev.get();
  std::lock_guard lock(ctx->mutex());
  if (value > ctx->stream().last_submitted())
    throw ArgumentError("vulkan host_wait: value " + std::to_string(value) + " was never submitted");
  ctx->stream().wait(value);
}

void synchronize(const VulkanDevice& dev) { dev.get()->synchronize(); }

}  // namespace ember::vulkan
