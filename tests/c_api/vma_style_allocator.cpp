#include "tests/c_api/vma_style_allocator.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace ember::capi_test {

VmaStyleAllocator::VmaStyleAllocator(VkPhysicalDevice physical, VkDevice device, VkDeviceSize page_size,
                                     VkDeviceSize limit)
    : device_(device), page_size_(page_size), limit_(limit) {
  vkGetPhysicalDeviceMemoryProperties(physical, &props_);
}

VmaStyleAllocator::~VmaStyleAllocator() {
  for (auto& p : pages_) vkFreeMemory(device_, p->memory, nullptr);  // unmaps
}

ember_vulkan_allocator VmaStyleAllocator::callbacks() {
  ember_vulkan_allocator a{};
  ember_vulkan_allocator_init(&a);
  a.user = this;
  a.allocate_memory = [](void* self, const ember_vulkan_memory_request* r, ember_vulkan_memory_block* out) {
    return static_cast<VmaStyleAllocator*>(self)->allocate(*r, *out);
  };
  a.free_memory = [](void* self, const ember_vulkan_memory_block* b) {
    static_cast<VmaStyleAllocator*>(self)->release(*b);
  };
  return a;
}

// VMA's choice: a type among the allowed bits with every required flag, the one with the most preferred flags.
uint32_t VmaStyleAllocator::pick_type(const ember_vulkan_memory_request& r) const {
  uint32_t best = UINT32_MAX;
  int best_score = -1;
  for (uint32_t i = 0; i < props_.memoryTypeCount; ++i) {
    if (!(r.memory_type_bits & (1u << i))) continue;
    const uint32_t flags = props_.memoryTypes[i].propertyFlags;
    if ((flags & r.required_flags) != r.required_flags) continue;
    const int score = __builtin_popcount(flags & r.preferred_flags);
    if (score > best_score) best = i, best_score = score;
  }
  return best;
}

bool VmaStyleAllocator::take(Page& p, VkDeviceSize size, VkDeviceSize alignment, VkDeviceSize& offset) {
  for (auto it = p.free.begin(); it != p.free.end(); ++it) {
    const VkDeviceSize begin = (it->first + alignment - 1) / alignment * alignment;
    const VkDeviceSize end = it->first + it->second;
    if (begin + size > end) continue;
    const VkDeviceSize head = begin - it->first, tail = end - (begin + size);
    const VkDeviceSize start = it->first;
    p.free.erase(it);
    if (head) p.free[start] = head;
    if (tail) p.free[begin + size] = tail;
    offset = begin;
    return true;
  }
  return false;
}

int32_t VmaStyleAllocator::allocate(const ember_vulkan_memory_request& r, ember_vulkan_memory_block& out) {
  std::lock_guard lock(mutex_);
  const uint32_t type = pick_type(r);
  if (type == UINT32_MAX) return VK_ERROR_FEATURE_NOT_PRESENT;
  const bool host_visible = props_.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
  VkDeviceSize offset = 0;
  Page* page = nullptr;
  for (auto& p : pages_)
    if (p->type == type && take(*p, r.size, r.alignment, offset)) {
      page = p.get();
      break;
    }
  if (!page) {
    const VkDeviceSize size = std::max(page_size_, r.size);
    VkDeviceSize held = 0;
    for (auto& p : pages_) held += p->size;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, nullptr, size, type};
    if ((limit_ && held + size > limit_) || vkAllocateMemory(device_, &ai, nullptr, &memory) != VK_SUCCESS) {
      ++failures_;
      return VK_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    auto p = std::make_unique<Page>();
    p->memory = memory;
    p->size = size;
    p->type = type;
    p->free[0] = size;
    if (host_visible && vkMapMemory(device_, memory, 0, VK_WHOLE_SIZE, 0, &p->mapped) != VK_SUCCESS) {
      vkFreeMemory(device_, memory, nullptr);
      return VK_ERROR_MEMORY_MAP_FAILED;
    }
    take(*p, r.size, r.alignment, offset);
    pages_.push_back(std::move(p));
    page = pages_.back().get();
  }
  ++page->live;
  ++total_;
  const uint64_t id = next_id_++;
  allocations_[id] = {page, r.size};
  out.memory = reinterpret_cast<uint64_t>(page->memory);
  out.offset = offset;
  out.mapped = page->mapped && r.mapped ? static_cast<char*>(page->mapped) + offset : nullptr;
  out.memory_type = type;
  out.allocation = id;
  return VK_SUCCESS;
}

void VmaStyleAllocator::release(const ember_vulkan_memory_block& b) {
  std::lock_guard lock(mutex_);
  auto it = allocations_.find(b.allocation);
  if (it == allocations_.end()) {
    ADD_FAILURE() << "Ember freed an allocation the host never made (or twice): " << b.allocation;
    return;
  }
  auto [page, size] = it->second;
  allocations_.erase(it);
  --page->live;
  auto [f, inserted] = page->free.emplace(b.offset, size);
  (void)inserted;
  auto next = std::next(f);
  if (next != page->free.end() && f->first + f->second == next->first) {
    f->second += next->second;
    page->free.erase(next);
  }
  if (f != page->free.begin()) {
    auto prev = std::prev(f);
    if (prev->first + prev->second == f->first) {
      prev->second += f->second;
      page->free.erase(f);
    }
  }
}

void VmaStyleAllocator::release_empty_pages() {
  std::lock_guard lock(mutex_);
  std::erase_if(pages_, [&](const std::unique_ptr<Page>& p) {
    if (p->live) return false;
    vkFreeMemory(device_, p->memory, nullptr);
    return true;
  });
}

int VmaStyleAllocator::live() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(allocations_.size());
}
int VmaStyleAllocator::total_allocations() const {
  std::lock_guard lock(mutex_);
  return total_;
}
int VmaStyleAllocator::failures() const {
  std::lock_guard lock(mutex_);
  return failures_;
}
std::size_t VmaStyleAllocator::pages() const {
  std::lock_guard lock(mutex_);
  return pages_.size();
}
VkDeviceSize VmaStyleAllocator::page_bytes() const {
  std::lock_guard lock(mutex_);
  VkDeviceSize n = 0;
  for (auto& p : pages_) n += p->size;
  return n;
}

}  // namespace ember::capi_test
