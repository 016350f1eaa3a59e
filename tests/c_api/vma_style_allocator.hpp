#pragma once
// A host's allocator in VMA's shape, as a game engine would hand it to Ember through ember_vulkan_allocator: the
// engine allocates large VkDeviceMemory pages with its own vkAllocateMemory (one list per memory type), hands out
// aligned ranges of them first-fit, keeps host-visible pages persistently mapped (VMA_ALLOCATION_CREATE_MAPPED_BIT)
// and counts what is live. VMA itself is not packaged for Debian; an engine that has it would call
// vmaAllocateMemory(allocator, &requirements, &create_info, &allocation, &info) inside allocate() instead and
// return info.deviceMemory / info.offset / info.pMappedData / info.memoryType, and vmaFreeMemory in release().
#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "ember.h"

namespace ember::capi_test {

class VmaStyleAllocator {
 public:
  // limit: the most bytes of pages the host lets this allocator hold (0: no limit), so a test can also make the
  // host's own allocator run out.
  VmaStyleAllocator(VkPhysicalDevice physical, VkDevice device, VkDeviceSize page_size, VkDeviceSize limit = 0);
  ~VmaStyleAllocator();
  VmaStyleAllocator(const VmaStyleAllocator&) = delete;
  VmaStyleAllocator& operator=(const VmaStyleAllocator&) = delete;

  // The callbacks Ember calls (user = this).
  ember_vulkan_allocator callbacks();

  int live() const;               // ranges handed out and not freed
  int total_allocations() const;  // allocate calls that succeeded
  int failures() const;           // allocate calls answered VK_ERROR_OUT_OF_DEVICE_MEMORY
  std::size_t pages() const;
  VkDeviceSize page_bytes() const;
  // Frees pages with nothing allocated in them (an engine does this between levels).
  void release_empty_pages();

 private:
  struct Page {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    uint32_t type = 0;
    void* mapped = nullptr;
    std::map<VkDeviceSize, VkDeviceSize> free;  // offset -> size
    int live = 0;
  };
  int32_t allocate(const ember_vulkan_memory_request& r, ember_vulkan_memory_block& out);
  void release(const ember_vulkan_memory_block& b);
  uint32_t pick_type(const ember_vulkan_memory_request& r) const;
  static bool take(Page& p, VkDeviceSize size, VkDeviceSize alignment, VkDeviceSize& offset);

  VkDevice device_;
  VkPhysicalDeviceMemoryProperties props_{};
  VkDeviceSize page_size_, limit_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Page>> pages_;
  std::map<uint64_t, std::pair<Page*, VkDeviceSize>> allocations_;  // id -> (page, size)
  uint64_t next_id_ = 1;
  int total_ = 0, failures_ = 0;
};

}  // namespace ember::capi_test
