#pragma once
// The host's allocator for Ember's memory blocks (ember.h's ember_vulkan_allocator, in C++ terms): a game engine
// keeps every VkDeviceMemory in its own allocator (VMA or its own heaps, its own accounting), so Ember asks it for
// the memory behind each block instead of calling vkAllocateMemory. Each callback is a std::function so the C ABI's
// function pointers and a C++ host's lambdas plug in alike.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>

namespace ember::vk {

struct HostAllocator {
  struct Request {
    VkDeviceSize size = 0, alignment = 1;
    uint32_t memory_type_bits = 0;            // buffer's memoryTypeBits & the types Ember accepts for this pool
    VkMemoryPropertyFlags required = 0;       // the chosen type must have these (HOST_VISIBLE | COHERENT: staging)
    VkMemoryPropertyFlags preferred = 0;      // Ember's first choice
    bool mapped = false;                      // return a host pointer when the type is host-visible
    bool staging = false;
  };
  struct Grant {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize offset = 0;                  // the block starts here in `memory`
    void* mapped = nullptr;                   // memory + offset, host-visible types only
    uint32_t memory_type = 0;
    uint64_t allocation = 0;                  // the host's handle, given back to release
  };
  // VK_SUCCESS with `out` filled, or the failure (VK_ERROR_OUT_OF_DEVICE_MEMORY: Ember trims and retries once).
  std::function<VkResult(const Request&, Grant& out)> allocate;
  std::function<void(const Grant&)> release;

  explicit operator bool() const { return static_cast<bool>(allocate); }
};

}  // namespace ember::vk
