#pragma once
// The "game engine" side of the example: a minimal Vulkan application that owns its instance, device, queue,
// buffers and one compute pipeline of its own, the way a renderer would. Nothing in here knows about Ember.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace game {

inline void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(r));
}

struct HostBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  VkDeviceSize size = 0;
};

class GameVulkan {
 public:
  // validation: enable VK_LAYER_KHRONOS_validation with a messenger that counts warnings and errors.
  GameVulkan(bool validation, uint32_t api_version);
  ~GameVulkan();

  // Creates the device with the extra features a library asked for (shaderInt64, timelineSemaphore).
  void create_device(bool shader_int64, bool timeline_semaphore);
  HostBuffer create_buffer(VkDeviceSize size);
  void destroy_buffer(HostBuffer& b);
  // The consume pass: decisions[r] = (argmax logits[r], its softmax probability).
  void create_consume_pipeline();
  // Records and submits the consume pass reading (logits, offset, size); waits on (wait_sem >= wait_value) on the
  // GPU first; returns when submitted (fence signalled when done).
  void submit_consume(VkBuffer logits, VkDeviceSize offset, VkDeviceSize size, const HostBuffer& decisions,
                      uint32_t rows, uint32_t classes, VkSemaphore wait_sem, uint64_t wait_value);
  void wait_consume();

  // Pre-recorded frames (recorded once at load, submitted every frame): allocate_frame() returns a command buffer
  // in the recording state (resubmittable: no ONE_TIME_SUBMIT); record_consume(..., kFixedSet) appends the
  // consume pass through a descriptor set that is written once and never updated while that buffer lives;
  // finish_frame() ends it with a barrier to host reads. submit_frame() submits it (fence: wait_consume()).
  VkCommandBuffer allocate_frame();
  void finish_frame(VkCommandBuffer cb);
  void submit_frame(VkCommandBuffer cb);

  // A frame recorded into one command buffer and submitted once (the plugin-style example, examples/vulkan_plugin):
  // begin_frame() returns the frame's command buffer in the recording state; record_consume() appends the consume
  // pass; end_frame() ends it with a barrier to host reads, submits it and waits for it.
  VkCommandBuffer begin_frame();
  // set: kFrameSet is rewritten per frame (one frame in flight); kFixedSet belongs to the pre-recorded frames.
  static constexpr int kFrameSet = 0, kFixedSet = 1;
  void record_consume(VkCommandBuffer cb, VkBuffer logits, VkDeviceSize offset, VkDeviceSize size,
                      const HostBuffer& decisions, uint32_t rows, uint32_t classes, int set = kFrameSet);
  void end_frame();

  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  std::mutex queue_mutex;  // the queue is shared with Ember (its lock/unlock callbacks take this)
  uint32_t validation_messages = 0;
  std::string device_name;

 private:
  uint32_t memory_type(uint32_t bits, VkMemoryPropertyFlags want);
  void write_set(VkDescriptorSet ds, VkBuffer logits, VkDeviceSize offset, VkDeviceSize size,
                 const HostBuffer& decisions);
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkDescriptorSet sets_[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
  bool fixed_written_ = false;
  VkBuffer fixed_buffers_[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
};

}  // namespace game
