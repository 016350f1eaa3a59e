#pragma once
// A stand-in for a host application that owns its Vulkan objects (what a game engine does before it hands its
// device to Ember through ember_vulkan_device_adopt): an instance with VK_LAYER_KHRONOS_validation and a
// debug-utils messenger that fails the running test on any warning or error, a device created with the features
// ember_vulkan_requirements_query reports, a queue shared with Ember under a mutex, and host-visible buffers.
#include <gtest/gtest.h>
#include <vulkan/vulkan.h>

#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "ember.h"

namespace ember::capi_test {

#define VK_ASSERT(call) ASSERT_EQ((call), VK_SUCCESS) << #call

// The usage of make_buffer's buffers.
constexpr VkBufferUsageFlags kHostBufferUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// A host-visible, host-coherent buffer usable as a storage buffer and as a copy source / destination.
struct HostBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  VkDeviceSize size = 0;
};

// What the host's device is created with. Default: ember_vulkan_requirements' full setup (Vulkan 1.2,
// shaderInt64, timelineSemaphore). Issue 17's lower floor: an API version of 1.1 (instance and device use, so the
// validation layer flags any 1.2 feature Ember would touch) and features left out.
struct HostFeatures {
  uint32_t api_version = 0;  // 0: ember_vulkan_requirements' version; VK_API_VERSION_1_1 excludes timelineSemaphore
  bool shader_int64 = true;
  bool timeline_semaphore = true;
  // Issue 17's f16 variants: devices without the feature are passed over (the host then says why()).
  bool shader_float16 = false;  // needs api_version 1.2 (VkPhysicalDeviceVulkan12Features)
  bool storage_16bit = false;   // storageBuffer16BitAccess
};

class VulkanHost {
 public:
  // Empty when no suitable device exists (why() says why): tests skip then. `queues`: how many queues of the
  // family the device is created with (at most what the family has: family_queue_count()).
  explicit VulkanHost(uint32_t queues = 1) : queues_(queues) { create(); }
  // A device with the given features (HostFeatures: issue 17's lower floor).
  explicit VulkanHost(const HostFeatures& features, uint32_t queues = 1) : features_(features), queues_(queues) {
    create();
  }
  ~VulkanHost() { destroy(); }
  VulkanHost(const VulkanHost&) = delete;
  VulkanHost& operator=(const VulkanHost&) = delete;

  bool ok() const { return device_ != VK_NULL_HANDLE; }
  const std::string& why() const { return why_; }
  bool validation() const { return validation_; }

  // The desc Ember adopts; queue locking goes through this object's mutex, which the host holds for its own use.
  ember_vulkan_device_desc desc(uint32_t queue_index = 0) {
    ember_vulkan_device_desc d{};
    d.struct_size = sizeof d;
    d.instance = instance_;
    d.physical_device = physical_;
    d.device = device_;
    d.queue_family = queue_family_;
    d.queue_index = queue_index;
    d.get_instance_proc_addr = reinterpret_cast<void*>(&vkGetInstanceProcAddr);
    d.lock_queue = [](void* self) { static_cast<VulkanHost*>(self)->queue_mutex_.lock(); ++static_cast<VulkanHost*>(self)->locks_; };
    d.unlock_queue = [](void* self) { static_cast<VulkanHost*>(self)->queue_mutex_.unlock(); };
    d.user = this;
    return d;
  }
  int locks() const { return locks_; }
  uint32_t family_queue_count() const { return family_queue_count_; }
  uint32_t queues() const { return queues_; }  // created on the device
  VkDeviceSize storage_alignment() const { return storage_alignment_; }

  // external: VkExternalMemoryBufferCreateInfo::handleTypes (0: a plain buffer). A buffer created for external
  // memory may change hands with VK_QUEUE_FAMILY_EXTERNAL (another API or process), issue 17 part 5's tests.
  HostBuffer make_buffer(VkDeviceSize size, VkExternalMemoryHandleTypeFlags external = 0);
  // Whether buffers with make_buffer's usage may be created for handle type `type` on this device.
  bool external_buffers(VkExternalMemoryHandleTypeFlagBits type) const;
  void free_buffer(HostBuffer& b);
  // Copies src[src_offset, +size) into dst on the host's queue after Ember's timeline semaphore reaches value
  // (a GPU-side wait, the way a renderer consumes Ember's output), and waits for the copy on the host.
  void copy_after(uint64_t ember_semaphore, uint64_t value, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst,
                  VkDeviceSize size);
  // A timeline semaphore of the host's, and a host-side signal of it.
  VkSemaphore make_timeline();
  void signal(VkSemaphore s, uint64_t value);
  void destroy_semaphore(VkSemaphore s) { vkDestroySemaphore(device_, s, nullptr); }
  // --- issue 17 plans: records f into a fresh command buffer of the host's (a frame), submits it on the host's
  // queue and waits for it, with a final barrier that makes the frame's writes visible to host reads.
  void run_frame(const std::function<void(VkCommandBuffer)>& f);
  VkDevice device() const { return device_; }

  // --- issue 17 parts 1 and 3: a frame the host records and submits itself (host-record mode)
  uint32_t queue_family() const { return queue_family_; }
  // A fresh primary command buffer, begun (one-time submit).
  VkCommandBuffer begin_frame();
  // The host's own pass after Ember's: copies src into dst and makes the copy visible to host reads.
  void record_copy(VkCommandBuffer cb, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst, VkDeviceSize size);
  // Ends and submits cb (under the queue lock, not counted in locks()), waiting on the GPU for `wait` >= value when
  // wait is not null; returns the fence of the submission.
  VkFence submit_frame(VkCommandBuffer cb, VkSemaphore wait = VK_NULL_HANDLE, uint64_t value = 0);
  // Waits for the frame's fence, lets the queue drain, and frees the fence and the command buffer.
  void finish_frame(VkFence fence, VkCommandBuffer cb);

 private:
  void create();
  void destroy();
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
    ADD_FAILURE() << "Vulkan validation "
                  << (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error: " : "warning: ")
                  << (data && data->pMessage ? data->pMessage : "(no message)");
    return VK_FALSE;
  }

  HostFeatures features_;
  std::string why_;
  bool validation_ = false;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  uint32_t family_queue_count_ = 0;
  uint32_t queues_ = 1;
  VkDeviceSize storage_alignment_ = 1;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  std::mutex queue_mutex_;
  int locks_ = 0;
};

}  // namespace ember::capi_test
