#include "backends/vulkan/readback.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "backends/vulkan/commands.hpp"
#include "backends/vulkan/context.hpp"

namespace ember::vk {

ReadbackRing::ReadbackRing(std::shared_ptr<Context> ctx, VkDeviceSize slot_bytes, uint32_t slots)
    : ctx_(std::move(ctx)), slot_bytes_(slot_bytes), entries_(slots) {
  if (slot_bytes == 0 || slots == 0) throw ArgumentError("vulkan readback: slot_bytes and slots must be > 0");
  stride_ = (slot_bytes + 255) / 256 * 256;  // each slot starts on its own 256-byte boundary
  ctx_->ensure_alive();
  memory_ = ctx_->allocator().allocate(stride_ * slots, MemoryUse::Staging);
  if (!memory_->mapped()) throw VulkanError("vulkan readback: the device has no host-visible memory for the ring");
}

const ReadbackRing::Entry& ReadbackRing::entry_of(uint64_t ticket) const {
  if (ticket == 0 || ticket >= next_ticket_)
    throw ArgumentError("ticket " + std::to_string(ticket) + " was never enqueued on this ring (last: " +
                        std::to_string(next_ticket_ - 1) + ")");
  const Entry& e = entries_[(ticket - 1) % entries_.size()];
  if (e.ticket != ticket)
    throw ArgumentError("ticket " + std::to_string(ticket) + " was overwritten by ticket " + std::to_string(e.ticket) +
                        " (a ring of " + std::to_string(entries_.size()) + " slots keeps the last " +
                        std::to_string(entries_.size()) + " tickets: poll sooner or create more slots)");
  return e;
}

uint64_t ReadbackRing::enqueue(const std::shared_ptr<Allocation>& src, VkDeviceSize bytes) {
  if (bytes > slot_bytes_)
    throw ArgumentError("the tensor's " + std::to_string(bytes) + " bytes do not fit a slot of " +
                        std::to_string(slot_bytes_) + " bytes");
  if (src && src->owner() != &ctx_->allocator())
    throw ArgumentError("the tensor lives on another Vulkan device than the readback ring");
  std::lock_guard ring(mutex_);
  std::lock_guard lock(ctx_->mutex());
  Stream& stream = ctx_->stream();
  const uint64_t ticket = next_ticket_;
  const std::size_t slot = (ticket - 1) % entries_.size();
  Entry e{ticket, bytes, false, 0};
  if (bytes == 0) {
    e.ready_at = 0;  // nothing to copy: ready at once
  } else if (const auto frame = stream.recording_frame()) {
    e.recorded = true;
    e.ready_at = *frame;
  } else {
    // The batch the copy goes into gets the next timeline value when it is submitted (a flush the copy itself
    // triggers included): the stream numbers its submits 1, 2, ... (as its deferred checks rely on too).
    e.ready_at = stream.last_submitted() + 1;
  }
  stream.copy(src, 0, memory_, slot * stride_, bytes);  // after the work that wrote src (stream barriers)
  // Only now, with the copy recorded, does the ticket exist (a failed record leaves the ring as it was).
  entries_[slot] = e;
  ++next_ticket_;
  return ticket;
}

VkDeviceSize ReadbackRing::bytes(uint64_t ticket) const {
  std::lock_guard ring(mutex_);
  return entry_of(ticket).bytes;
}

bool ReadbackRing::completed(const Entry& e) {
  if (e.recorded) {
    // The host's word (ember_vulkan_safe_frame) that the frame's GPU work completed. Ops never wait in host-record
    // mode, so the context's lock is never held long.
    std::lock_guard lock(ctx_->mutex());
    const auto safe = ctx_->stream().safe_frame_index();
    return safe && e.ready_at <= *safe;
  }
  if (e.ready_at <= reached_) return true;
  // A query of the fence and the counter, not a wait: this is what keeps poll() from ever blocking. (The fence too:
  // lavapipe may update the counter a little after the batch's fence signalled, i.e. after a finish() returned.)
  std::lock_guard lock(ctx_->mutex());
  if (!ctx_->stream().completed(e.ready_at)) return false;
  reached_ = e.ready_at;
  return true;
}

bool ReadbackRing::poll(uint64_t ticket, void* dst) {
  std::lock_guard ring(mutex_);
  const Entry& e = entry_of(ticket);
  ctx_->ensure_alive();
  if (!completed(e)) return false;
  if (!memory_->coherent()) {
    // The whole memory object: always a valid range whatever nonCoherentAtomSize is; rare (staging prefers
    // HOST_COHERENT memory).
    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    range.memory = memory_->memory();
    range.size = VK_WHOLE_SIZE;
    ctx_->check(ctx_->fn().InvalidateMappedMemoryRanges(ctx_->device(), 1, &range), "vkInvalidateMappedMemoryRanges");
  }
  const std::size_t slot = (ticket - 1) % entries_.size();
  if (e.bytes) std::memcpy(dst, static_cast<const char*>(memory_->mapped()) + slot * stride_, e.bytes);
  return true;
}

}  // namespace ember::vk
