#pragma once
// The Vulkan interop behind ember.h's ember_vulkan_* functions, type-erased like BackendRuntime: api_vulkan.cpp
// (in libember, no Vulkan headers) validates the C arguments and calls this; the Vulkan plugin implements it
// (plugins/vulkan_interop_impl.cpp). Vulkan handles travel as ember.h spells them: void* for dispatchable
// handles, uint64_t for the others.
#include <cstdint>
#include <memory>
#include <utility>
#include <memory>
#include <vector>

#include "c_api/src/runtime/dyn.hpp"
#include "ember.h"

namespace ember::capi {

struct VulkanBufferView {
  uint64_t buffer = 0, offset = 0, size = 0;
};

// ember.h's ember_vulkan_readback: a readback ring (backends/vulkan/readback.hpp) behind a type-erased face.
class VulkanReadback {
 public:
  virtual ~VulkanReadback() = default;
  // A Vulkan tensor (the caller checked the backend); its storage bytes go into the next slot. Returns the ticket.
  virtual uint64_t enqueue(const DynTensor& t) = 0;
  // The ticket's byte count (ArgumentError for a ticket never enqueued or overwritten).
  virtual uint64_t bytes(uint64_t ticket) const = 0;
  // true and the bytes in dst (room for bytes(ticket)) once the copy executed; false, nothing written, before.
  virtual bool poll(uint64_t ticket, void* dst) = 0;
};

struct VulkanQueueInfo {
  uint32_t family = 0, index = 0;
};

class VulkanInterop {
 public:
  virtual ~VulkanInterop() = default;
  // Every field but struct_size; the extension names have static storage.
  virtual ember_vulkan_requirements requirements() const = 0;
  // desc was validated by the caller (required handles set, queue callbacks paired, cache data present), and so
  // were the options' ranges.
  virtual DynDevice adopt(const ember_vulkan_device_desc& desc, const ember_vulkan_adopt_options& options) const = 0;
  // Arguments are of the Vulkan runtime (the caller checked the backend); buffers and semaphores are not NULL.
  virtual VulkanBufferView tensor_buffer(const DynTensor& t) const = 0;
  virtual DynTensor wrap_buffer(const DynDevice& d, uint64_t buffer, uint64_t offset, DType dtype,
                                const Shape& shape) const = 0;
  virtual uint64_t submit(const DynDevice& d) const = 0;
  virtual uint64_t timeline_semaphore(const DynDevice& d) const = 0;
  virtual void wait_semaphore(const DynDevice& d, uint64_t semaphore, uint64_t value) const = 0;
  virtual void host_wait(const DynDevice& d, uint64_t value) const = 0;
  virtual void synchronize(const DynDevice& d) const = 0;
  virtual std::vector<uint8_t> pipeline_cache_data(const DynDevice& d) const = 0;
  // --- issue 17 parts 1 and 3: host-record mode, deferred device-side checks
  virtual void record_begin(const DynDevice& d, void* command_buffer, uint32_t queue_family,
                            uint64_t frame_index) const = 0;
  virtual void record_end(const DynDevice& d) const = 0;
  virtual void safe_frame(const DynDevice& d, uint64_t safe_frame_index) const = 0;
  // Frames recorded and not yet safe, and the resources (allocations, descriptor pools) Ember holds for them.
  virtual std::pair<uint64_t, uint64_t> record_pending(const DynDevice& d) const = 0;
  virtual void poll_errors(const DynDevice& d) const = 0;

  // --- issue 17 part 8: device lost, readback ring, queue choice
  virtual void simulate_device_lost(const DynDevice& d, uint32_t after) const = 0;
  virtual bool device_lost(const DynDevice& d) const = 0;
  virtual VulkanQueueInfo queue_info(const DynDevice& d) const = 0;
  // slot_bytes and slots were range-checked by the caller.
  virtual std::shared_ptr<VulkanReadback> readback_create(const DynDevice& d, uint64_t slot_bytes,
                                                          uint32_t slots) const = 0;

  // --- issue 17 parts 4 and 5: memory the host controls, resource states for host buffers
  virtual ember_vulkan_memory_stats memory_stats(const DynDevice& d) const = 0;  // every field but struct_size
  virtual void memory_trim(const DynDevice& d) const = 0;
  virtual void set_memory_budget(const DynDevice& d, uint64_t budget) const = 0;
  virtual DynTensor wrap_buffer_writable(const DynDevice& d, uint64_t buffer, uint64_t offset, DType dtype,
                                         const Shape& shape) const = 0;
  virtual void write_wrapped(const DynTensor& wrapped, const DynTensor& src) const = 0;
  virtual void buffer_acquire(const DynTensor& t, uint32_t stage, uint32_t access, uint32_t family) const = 0;
  virtual void buffer_release(const DynTensor& t, uint32_t stage, uint32_t access, uint32_t family) const = 0;
  virtual ember_vulkan_buffer_state buffer_state(const DynTensor& t) const = 0;  // every field but struct_size
  // --- issue 17 parts 2 and 7: plans and warm-up. A plan is the plugin's object (vk::Plan), type-erased; the
  // caller (api_vulkan_plan.cpp) checked indices, dtypes and shapes and keeps the plan's capture state.
  virtual std::shared_ptr<void> plan_begin(const DynDevice& d) const = 0;
  virtual DynTensor plan_add_input(const std::shared_ptr<void>& plan, const DynDevice& d, DType dtype,
                                   const Shape& s) const = 0;
  virtual void plan_end(const std::shared_ptr<void>& plan, const std::vector<DynTensor>& outputs) const = 0;
  virtual void plan_abort(const std::shared_ptr<void>& plan) const = 0;
  virtual void plan_bind(const std::shared_ptr<void>& plan, bool output, std::size_t index, uint64_t buffer,
                         uint64_t offset) const = 0;
  virtual void plan_record(const std::shared_ptr<void>& plan, void* command_buffer) const = 0;
  virtual uint64_t plan_submit(const std::shared_ptr<void>& plan) const = 0;
  virtual void plan_poll_errors(const std::shared_ptr<void>& plan) const = 0;  // throws the op's error
  // Throws (EMBER_ERR_UNSUPPORTED) while d is in host-record mode: building and warming up wait for the GPU.
  virtual void plan_refuse_in_record_mode(const DynDevice& d) const = 0;
  // --- issue 17 part 6: f16 variants. The EMBER_VULKAN_FEATURE_FLOAT16 / _STORAGE_16BIT bits of the variants d uses;
  // a plan's f16 weight copies (count, bytes).
  virtual uint32_t float16_variants(const DynDevice& d) const = 0;
  virtual std::pair<std::size_t, uint64_t> plan_f16_weights(const std::shared_ptr<void>& plan) const = 0;
  // false: d was adopted without timeline semaphores (Ember never submits or waits; plans build without a warm-up).
  virtual bool timeline_semaphores(const DynDevice& d) const = 0;
};

}  // namespace ember::capi
