#pragma once
// Sharing a Vulkan device with a host application (a game engine that owns its VkInstance / VkDevice / queue).
//
//   auto reqs = ember::vulkan::requirements();        // before the host creates its device: features to enable
//   VulkanDevice dev = ember::vulkan::adopt(desc);     // Ember runs on the host's device and queue
//   auto x = ember::vulkan::wrap_buffer<Float, 2>(dev, host_buffer, offset, {rows, cols});  // no copy
//   auto y = model.forward(x);
//   auto view = ember::vulkan::buffer_of(y);           // (VkBuffer, offset, size) for the host's own passes
//   uint64_t done = ember::vulkan::submit(dev);        // the host waits on timeline() >= done (GPU side)
//
// Synchronization is a pair of timeline semaphores: Ember's (signalled by every submit with an increasing value)
// and, optionally, the host's, which Ember's next submit waits for (wait_for): the host writes its input buffer
// in its own submission, signals its semaphore, Ember's work waits for it on the GPU, no host round trip.
// Ember never destroys objects it did not create, and never writes a wrapped buffer (ops write fresh outputs) unless
// it was wrapped writable; then write_wrapped (resource_state.hpp) copies an output into it.
#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>

#include "backends/vulkan/commands.hpp"
#include "backends/vulkan/context.hpp"
#include "backends/vulkan/memory.hpp"
#include "backends/vulkan/vulkan_backend.hpp"
#include "engine/tensor/tensor.hpp"

namespace ember::vulkan {

using vk::ContextOptions;
using vk::ExternalDevice;
using vk::Requirements;
using vk::requirements;

// A device of Ember's own (validation, device index, pipeline cache...).
VulkanDevice create(const ContextOptions& options = {});
// The host's device: Ember shares its queue (lock/unlock callbacks around each submit) and never destroys it.
VulkanDevice adopt(const ExternalDevice& external, const ContextOptions& options = {});

struct BufferView {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
};

// The storage of a primitive: valid while the tensor (or a copy of it) lives. Its contents are final once the
// timeline value returned by submit() is reached.
template <class T>
BufferView buffer_of(const vk::VulkanTensor<T>& t) {
  return {t.alloc->buffer(), t.alloc->offset(), t.bytes()};
}
template <std::size_t D, class K>
BufferView buffer_of(const Tensor<Vulkan, D, K>& t) {
  return buffer_of(t.primitive());
}

// A tensor over a host-owned VkBuffer (created with VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, on the adopted device),
// without copying. offset must be a multiple of minStorageBufferOffsetAlignment. The host keeps the buffer alive
// while the tensor and the work reading it live.
template <class T>
vk::VulkanTensor<T> wrap_buffer(const VulkanDevice& dev, VkBuffer buffer, VkDeviceSize offset, const Shape& shape,
                                bool writable = false) {
  auto ctx = dev.get();
  const auto bytes = static_cast<VkDeviceSize>(shape.num_elements()) * vk::element_bytes<T>(*ctx);
  if (offset % ctx->info().min_storage_buffer_offset_alignment != 0)
    throw ArgumentError("vulkan wrap_buffer: offset " + std::to_string(offset) +
                        " is not a multiple of minStorageBufferOffsetAlignment");
  if (bytes > ctx->info().max_storage_buffer_range)
    throw ArgumentError("vulkan wrap_buffer: the tensor exceeds maxStorageBufferRange");
  return {ctx, ctx->allocator().wrap(buffer, offset, bytes ? bytes : 4, writable), shape};
}
template <class K, std::size_t D>
Tensor<Vulkan, D, K> wrap_buffer(const VulkanDevice& dev, VkBuffer buffer, VkDeviceSize offset,
                                 std::array<int64_t, D> shape) {
  Shape s;
  s.dims.assign(shape.begin(), shape.end());
  check_dims("wrap_buffer", s);
  return Tensor<Vulkan, D, K>(wrap_buffer<Vulkan::Elem<K>>(dev, buffer, offset, s));
}

// Submits everything recorded on dev so far; the returned value is reached on timeline(dev) when it has executed.
uint64_t submit(const VulkanDevice& dev);
// Ember's timeline semaphore (owned by Ember: the host waits on it, never signals or destroys it).
VkSemaphore timeline(const VulkanDevice& dev);
// Ember's next submit waits (on the GPU) until the host's timeline semaphore reaches value.
void wait_for(const VulkanDevice& dev, VkSemaphore host_timeline, uint64_t value);
// Blocks the calling thread until value is reached on Ember's timeline (submit() first).
void host_wait(const VulkanDevice& dev, uint64_t value);
// Waits for all of Ember's work on dev.
void synchronize(const VulkanDevice& dev);

// Host-record mode (issue 17 part 1; Stream::record_begin): between record_begin and record_end every op on dev
// is recorded into the host's command buffer cb (begun, outside a render pass, of queue family queue_family: the
// adopted queue's); Ember never submits or waits then (a read to the CPU, a submit, a wait are errors). Resources a
// frame uses are kept until safe_frame(dev, i) with i >= its frame_index.
void record_begin(const VulkanDevice& dev, VkCommandBuffer cb, uint32_t queue_family, uint64_t frame_index);
void record_end(const VulkanDevice& dev);
void safe_frame(const VulkanDevice& dev, uint64_t safe_frame_index);
vk::PendingFrames pending_frames(const VulkanDevice& dev);
// Throws the first failed device-side check (index range, integer division by zero) of completed work: Ember's
// submits whose timeline value was reached, recorded frames up to the last safe frame. Never waits.
void poll_errors(const VulkanDevice& dev);

// Memory the host controls (issue 17): what Ember holds, releasing its empty blocks, changing its budget.
vk::MemoryTotals memory_stats(const VulkanDevice& dev);
void memory_trim(const VulkanDevice& dev);
void set_memory_budget(const VulkanDevice& dev, VkDeviceSize budget);

}  // namespace ember::vulkan
