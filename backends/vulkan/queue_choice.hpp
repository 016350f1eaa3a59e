#pragma once
// Which queue Ember's own device runs on. A discrete GPU usually has a compute-only family besides its universal
// (graphics + compute) one: work there runs asynchronously to a renderer's graphics queue ("async compute"), which
// is what Ember prefers by default. A host that shares memory with its renderer may rather want the universal
// family (no queue-family ownership transfers), or a fixed family and queue. Adopted devices take the host's
// queue as given (ember_vulkan_device_desc's queue_family / queue_index).
#include <vulkan/vulkan.h>

#include <cstdint>
#include <span>
#include <string>

namespace ember::vk {

enum class QueuePreference {
  AsyncCompute,         // a compute-only family when the device has one, else a universal one (default)
  Universal,            // a graphics + compute family when the device has one, else any compute family
  RequireAsyncCompute,  // a compute-only family; VulkanError when the device has none
};

struct QueueChoice {
  uint32_t family = 0;
  uint32_t index = 0;
};

// The family and queue for a device with `families`: `family` >= 0 picks that family (it must run compute work),
// else `preference` decides; `index` must be below the family's queueCount. Throws VulkanError (UNSUPPORTED in C)
// when nothing fits, naming what the device has.
QueueChoice choose_queue(std::span<const VkQueueFamilyProperties> families, QueuePreference preference, int family,
                         uint32_t index);

// EMBER_VULKAN_QUEUE, when set, overrides the options' choice: "async" (AsyncCompute), "universal", "async-only"
// (RequireAsyncCompute), or "<family>" / "<family>:<index>". Throws ArgumentError for anything else.
void apply_queue_env(QueuePreference& preference, int& family, uint32_t& index);

// "graphics|compute|transfer" for error messages.
std::string queue_flags_text(VkQueueFlags flags);

}  // namespace ember::vk
