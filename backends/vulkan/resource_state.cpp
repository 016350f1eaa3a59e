#include "backends/vulkan/resource_state.hpp"

#include <fmt/format.h>

#include <span>

#include "backends/vulkan/commands.hpp"
#include "backends/vulkan/context.hpp"

namespace ember::vk {
namespace {

// A transfer only when a family other than Ember's is named.
bool is_transfer(const Context& ctx, uint32_t family) {
  return family != VK_QUEUE_FAMILY_IGNORED && family != ctx.queue_family();
}

void check_same_context(const Context& ctx, const Allocation& alloc, const char* fn) {
  if (alloc.owner() != &const_cast<Context&>(ctx).allocator())
    throw ArgumentError(fmt::format("vulkan {}: the tensor lives on another device", fn));
}

// One VkBufferMemoryBarrier over alloc's range, recorded after Ember's earlier commands; the stream keeps the
// allocation alive until the batch holding the barrier has executed.
void record_barrier(Context& ctx, const std::shared_ptr<Allocation>& alloc, VkPipelineStageFlags src_stage,
                    VkAccessFlags src_access, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access,
                    uint32_t src_family, uint32_t dst_family) {
  VkBufferMemoryBarrier b{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
  b.srcAccessMask = src_access;
  b.dstAccessMask = dst_access;
  b.srcQueueFamilyIndex = src_family;
  b.dstQueueFamilyIndex = dst_family;
  b.buffer = alloc->buffer();
  b.offset = alloc->offset();
  b.size = alloc->size();
  ctx.stream().retain(alloc);
  ctx.stream().record(std::span<const BufferArg>{}, [&](VkCommandBuffer cb) {
    ctx.fn().CmdPipelineBarrier(cb, src_stage, dst_stage, 0, 0, nullptr, 1, &b, 0, nullptr);
  });
}

}  // namespace

BufferState buffer_state(Context& ctx, const Allocation& alloc) {
  std::lock_guard lock(ctx.mutex());
  BufferState s;
  s.write_stage = alloc.write_stage();
  s.write_access = alloc.write_access();
  s.usage = alloc.usage();
  s.queue_family = alloc.owner_family() == VK_QUEUE_FAMILY_IGNORED ? ctx.queue_family() : alloc.owner_family();
  s.wrapped = alloc.wrapped();
  s.writable = alloc.writable();
  return s;
}

void acquire(Context& ctx, const std::shared_ptr<Allocation>& alloc, VkPipelineStageFlags src_stage,
             VkAccessFlags src_access, uint32_t src_family) {
  check_same_context(ctx, *alloc, "buffer_acquire");
  std::lock_guard lock(ctx.mutex());
  const uint32_t owner = alloc->owner_family();
  if (owner != VK_QUEUE_FAMILY_IGNORED && src_family != owner)
    throw ArgumentError(fmt::format("vulkan buffer_acquire: the range was released to queue family {}; acquire it "
                                    "from that family, not {}", owner, src_family));
  const bool transfer = is_transfer(ctx, src_family);
  // An acquire's source access is ignored by Vulkan (the host's release made the writes available); its source
  // stage must still be one Ember's queue supports: the stage Ember's semaphore waits use then.
  if (transfer) {
    src_stage = kEmberStages;
    src_access = 0;
  }
  if (!src_stage) src_stage = VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT;  // Vulkan 1.2 barriers need a stage
  record_barrier(ctx, alloc, src_stage, src_access, kEmberStages, kEmberAccesses,
                 transfer ? src_family : VK_QUEUE_FAMILY_IGNORED,
                 transfer ? ctx.queue_family() : VK_QUEUE_FAMILY_IGNORED);
  alloc->set_owner_family(VK_QUEUE_FAMILY_IGNORED);
}

void release(Context& ctx, const std::shared_ptr<Allocation>& alloc, VkPipelineStageFlags dst_stage,
             VkAccessFlags dst_access, uint32_t dst_family) {
  check_same_context(ctx, *alloc, "buffer_release");
  std::lock_guard lock(ctx.mutex());
  alloc->check_use(false, ctx.queue_family());  // already released: not Ember's to release
  const bool transfer = is_transfer(ctx, dst_family);
  // A release's destination access is ignored, and its destination stage may be one Ember's (compute-only) queue
  // lacks: the host's acquire on its own queue carries them.
  if (transfer) {
    dst_stage = VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT;
    dst_access = 0;
  }
  if (!dst_stage) dst_stage = VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT;
  record_barrier(ctx, alloc, kEmberStages, kEmberWrites, dst_stage, dst_access,
                 transfer ? ctx.queue_family() : VK_QUEUE_FAMILY_IGNORED,
                 transfer ? dst_family : VK_QUEUE_FAMILY_IGNORED);
  if (transfer) alloc->set_owner_family(dst_family);
}

void write_wrapped(Context& ctx, const std::shared_ptr<Allocation>& dst, const std::shared_ptr<Allocation>& src,
                   VkDeviceSize bytes) {
  check_same_context(ctx, *dst, "tensor_write_wrapped");
  check_same_context(ctx, *src, "tensor_write_wrapped");
  if (!dst->wrapped())
    throw ArgumentError("vulkan tensor_write_wrapped: the destination is not a wrapped host buffer "
                        "(ember_vulkan_tensor_wrap_buffer_ex)");
  if (!dst->writable())
    throw ArgumentError("vulkan tensor_write_wrapped: the host buffer was wrapped read-only (wrap it with "
                        "EMBER_VULKAN_WRAP_WRITABLE)");
  std::lock_guard lock(ctx.mutex());
  ctx.stream().copy(src, 0, dst, 0, bytes);
}

}  // namespace ember::vk
