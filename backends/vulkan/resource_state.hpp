#pragma once
// Resource states of buffers Ember shares with a host (issue 17 part 5): the barriers a host asks for around its
// own use of a tensor's buffer range (acquire before Ember uses it, release after), queue-family ownership
// transfers for VK_SHARING_MODE_EXCLUSIVE buffers between the host's family and Ember's, the stage and access of
// Ember's last write (where the host's barrier starts), and writing an op's output into a writable host buffer.
// Each barrier is one VkBufferMemoryBarrier over the tensor's range, recorded into Ember's command stream in order
// with its work (so it lands in the host's command buffer too when Ember records there).
#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>

#include "backends/vulkan/memory.hpp"

namespace ember::vk {

class Context;

struct BufferState {
  VkPipelineStageFlags write_stage = 0;  // 0: Ember never wrote the range
  VkAccessFlags write_access = 0;
  VkBufferUsageFlags usage = 0;          // 0 for a wrapped host buffer
  uint32_t queue_family = 0;             // the family owning the range now
  bool wrapped = false, writable = false;
};

// The stages and accesses of Ember's own commands on a buffer (compute dispatches and transfers).
constexpr VkPipelineStageFlags kEmberStages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kEmberWrites = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
constexpr VkAccessFlags kEmberAccesses =
    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

BufferState buffer_state(Context& ctx, const Allocation& alloc);
// The host last used the range at src_stage / src_access on src_family (VK_QUEUE_FAMILY_IGNORED or Ember's: no
// transfer; another family: the acquire half of an ownership transfer, whose release the host recorded).
void acquire(Context& ctx, const std::shared_ptr<Allocation>& alloc, VkPipelineStageFlags src_stage,
             VkAccessFlags src_access, uint32_t src_family);
// The host next uses the range at dst_stage / dst_access on dst_family (another family: the release half; Ember
// then refuses to use the range until it is acquired back).
void release(Context& ctx, const std::shared_ptr<Allocation>& alloc, VkPipelineStageFlags dst_stage,
             VkAccessFlags dst_access, uint32_t dst_family);
// Records a copy of `bytes` from src into the writable wrapped buffer range dst.
void write_wrapped(Context& ctx, const std::shared_ptr<Allocation>& dst, const std::shared_ptr<Allocation>& src,
                   VkDeviceSize bytes);

}  // namespace ember::vk
