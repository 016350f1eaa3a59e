#pragma once
// An asynchronous readback ring for gameplay code: results land in persistently mapped host-visible memory a frame
// or two after they were asked for, and nothing waits. enqueue() records a copy of a tensor into the next of
// `slots` slots; the copy runs with Ember's next submit (ember_vulkan_submit, or a flush of Ember's own) or, in
// host-record mode, inside the host's command buffer. poll() reports whether the GPU has executed it and, once it
// has, copies the bytes out. Ticket t lives in slot (t - 1) % slots until ticket t + slots is enqueued; polling it
// after that is an error, never stale data.
//
// Completion has two sources (completed()): a copy in a batch of Ember's own is done when Ember's timeline
// semaphore reached that batch's value (a counter query, never a wait); a copy recorded into the host's frame F is
// done when the host reported a safe frame >= F (ember_vulkan_safe_frame, Unity's safeFrameNumber).
#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/vulkan/memory.hpp"

namespace ember::vk {

class Context;

class ReadbackRing {
 public:
  // slot_bytes > 0, slots > 0 (the caller bounds them); host-visible memory of slots * slot_bytes (rounded up).
  ReadbackRing(std::shared_ptr<Context> ctx, VkDeviceSize slot_bytes, uint32_t slots);

  // Records a copy of src[0, bytes) into the next slot (no submit: the caller's flush policy holds); returns the
  // ticket (1, 2, ...). ArgumentError when bytes exceed a slot or src is of another context.
  uint64_t enqueue(const std::shared_ptr<Allocation>& src, VkDeviceSize bytes);
  // The byte count of a ticket still in the ring; ArgumentError for one never enqueued or already overwritten.
  VkDeviceSize bytes(uint64_t ticket) const;
  // Once the GPU has executed the ticket's copy: its bytes into dst (room for bytes(ticket)) and true. Before: false,
  // nothing written. Never waits; DeviceLost on a lost device.
  bool poll(uint64_t ticket, void* dst);

  const std::shared_ptr<Context>& context() const { return ctx_; }
  uint32_t slots() const { return static_cast<uint32_t>(entries_.size()); }
  VkDeviceSize slot_bytes() const { return slot_bytes_; }

 private:
  struct Entry {
    uint64_t ticket = 0;  // 0: never used
    VkDeviceSize bytes = 0;
    // Recorded into the host's frame `ready_at`; else in Ember's own batch of timeline value `ready_at`.
    bool recorded = false;
    uint64_t ready_at = 0;
  };
  const Entry& entry_of(uint64_t ticket) const;
  bool completed(const Entry& e);

  std::shared_ptr<Context> ctx_;
  VkDeviceSize slot_bytes_, stride_;
  // Owned by the ring and, while a copy into it is in flight, by that batch (so freeing the ring never waits).
  std::shared_ptr<Allocation> memory_;
  std::vector<Entry> entries_;
  uint64_t next_ticket_ = 1;
  uint64_t reached_ = 0;  // the highest timeline value seen so far
  mutable std::mutex mutex_;
};

}  // namespace ember::vk
