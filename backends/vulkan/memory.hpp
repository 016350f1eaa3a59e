#pragma once
// Device memory: a pooled sub-allocator over large VkDeviceMemory blocks, each with one VkBuffer spanning it, so a
// tensor is (block buffer, offset, size) and allocating one costs no Vulkan call in the steady state.
//  * Pools by purpose with memory-type preference lists: Tensor memory prefers DEVICE_LOCAL (and, on integrated or
//    CPU devices, DEVICE_LOCAL|HOST_VISIBLE so uploads and reads are plain memcpy: unified memory); Staging prefers
//    HOST_VISIBLE|HOST_COHERENT|HOST_CACHED.
//  * A tensor larger than maxStorageBufferRange (128 MiB on lavapipe) cannot be bound to a shader and is refused
//    with a clear error; exhausted memory is a DeviceOutOfMemory error, never a crash.
//  * Freed ranges return to their block (coalescing neighbours) once the last reference drops; the command stream
//    holds references to everything a submitted batch uses, so memory is never reused while the GPU reads it.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace ember::vk {

class Context;

enum class MemoryUse { Tensor, Staging };

struct Block {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;  // persistently mapped when host-visible
  bool coherent = true;
  bool dedicated = false;
  uint32_t memory_type = 0;
  std::map<VkDeviceSize, VkDeviceSize> free;  // offset -> size
  VkDeviceSize used = 0;
};

class Allocator;

// One sub-allocation. Owned through shared_ptr; returns its range to the block when the last owner lets go.
class Allocation {
 public:
  Allocation(Allocator* owner, Block* block, VkDeviceSize offset, VkDeviceSize size)
      : owner_(owner), block_(block), offset_(offset), size_(size) {}
  ~Allocation();
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  VkBuffer buffer() const { return block_->buffer; }
  VkDeviceSize offset() const { return offset_; }
  VkDeviceSize size() const { return size_; }
  // Host pointer to the start of this allocation, or null when the memory is not host-visible.
  void* mapped() const { return block_->mapped ? static_cast<char*>(block_->mapped) + offset_ : nullptr; }
  bool coherent() const { return block_->coherent; }
  VkDeviceMemory memory() const { return block_->memory; }
  const Allocator* owner() const { return owner_; }

 private:
  Allocator* owner_;
  Block* block_;
  VkDeviceSize offset_, size_;
};

struct MemoryStats {
  VkDeviceSize reserved = 0;  // bytes in VkDeviceMemory blocks
  VkDeviceSize in_use = 0;    // bytes handed out
  std::size_t blocks = 0;
};

class Allocator {
 public:
  explicit Allocator(Context& ctx);
  ~Allocator();

  std::shared_ptr<Allocation> allocate(VkDeviceSize bytes, MemoryUse use);
  // Wraps a buffer the host owns (no copy; Ember never frees it). `memory` may be null.
  std::shared_ptr<Allocation> wrap(VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size);
  // Frees every block with nothing allocated in it.
  void release_unused();
  MemoryStats stats(MemoryUse use) const;
  bool host_visible(MemoryUse use) const;

 private:
  friend class Allocation;
  struct Pool {
    std::vector<uint32_t> type_order;  // memory types to try, best first
    bool map = true;  // map host-visible blocks (false: ContextOptions::device_local_tensors)
    std::vector<std::unique_ptr<Block>> blocks;
  };
  void free(Block* block, VkDeviceSize offset, VkDeviceSize size);
  Block* new_block(Pool& pool, VkDeviceSize size, bool dedicated);
  Pool& pool(MemoryUse use) { return use == MemoryUse::Tensor ? tensor_ : staging_; }
  const Pool& pool(MemoryUse use) const { return use == MemoryUse::Tensor ? tensor_ : staging_; }
  void destroy_block(Block* b);

  Context& ctx_;
  mutable std::mutex mutex_;
  Pool tensor_, staging_;
  VkDeviceSize alignment_ = 256;
  VkDeviceSize block_size_ = VkDeviceSize{64} << 20;
  std::vector<std::unique_ptr<Block>> wrapped_;  // external buffers (no memory of ours)
};

}  // namespace ember::vk
