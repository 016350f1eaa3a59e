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

void record_begin(const VulkanDevice& dev, VkCommandBuffer cb, uint32_t queue_family, uint64_t frame_index) {
  auto ctx = dev.get();
  std::lock_guard lock(ctx->mutex());
  ctx->stream().record_begin(cb, queue_family, frame_index);
}

void record_end(const VulkanDevice& dev) {
  auto ctx = dev.get();
  std::lock_guard lock(ctx->mutex());
  ctx->stream().record_end();
}

void safe_frame(const VulkanDevice& dev, uint64_t safe_frame_index) {
  auto ctx = dev.get();
  std::lock_guard lock(ctx->mutex());
  ctx->stream().safe_frame(safe_frame_index);
}

vk::PendingFrames pending_frames(const VulkanDevice& dev) {
  auto ctx = dev.get();
  std::lock_guard lock(ctx->mutex());
  return ctx->stream().pending_frames();
}

void poll_errors(const VulkanDevice& dev) {
  auto ctx = dev.get();
  std::lock_guard lock(ctx->mutex());
  ctx->stream().poll_errors();
}

vk::MemoryTotals memory_stats(const VulkanDevice& dev) { return dev.get()->allocator().totals(); }
void memory_trim(const VulkanDevice& dev) { dev.get()->allocator().release_unused(); }
void set_memory_budget(const VulkanDevice& dev, VkDeviceSize budget) { dev.get()->allocator().set_budget(budget); }

}  // namespace ember::vulkan
