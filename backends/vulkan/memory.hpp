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
//  * Memory the host controls (issue 17): the blocks' memory may come from the host's allocator (host_allocator.hpp)
//    instead of vkAllocateMemory; a budget caps the bytes held (blocks shrink to fit it; past it an allocation
//    releases empty blocks, finishes the stream's work and releases again, then fails with a DeviceOutOfMemory
//    naming the budget and the request); the host may
//    ask for extra buffer usages on tensor blocks (vertex, indirect) to bind outputs directly.
//  * Resource state per allocation (ember.h's ember_vulkan_buffer_state): how Ember last wrote it (the stage and
//    access a host's barrier starts from), which queue family owns it, whether a wrapped host buffer is writable.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/vulkan/host_allocator.hpp"

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
  VkBufferUsageFlags usage = 0;   // of `buffer` (0 for a wrapped host buffer: the host knows its own)
  bool host_memory = false;       // `grant` came from the host's allocator
  HostAllocator::Grant grant;
  bool wrapped_writable = false;  // a wrapped host buffer Ember may write (EMBER_VULKAN_WRAP_WRITABLE)
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
  VkBufferUsageFlags usage() const { return block_->usage; }
  bool wrapped() const { return !block_->memory; }
  bool writable() const { return block_->memory || block_->wrapped_writable; }

  // Resource state; read and changed under the context's mutex (the command stream records with it held).
  // Throws ArgumentError when a command would write a read-only wrapped buffer, or use a range released to another
  // queue family: the command is refused before anything is recorded.
  void check_use(bool write, uint32_t ember_family) const;
  void note_write(VkPipelineStageFlags stage, VkAccessFlags access) {
    write_stage_ = stage;
    write_access_ = access;
  }
  VkPipelineStageFlags write_stage() const { return write_stage_; }
  VkAccessFlags write_access() const { return write_access_; }
  // VK_QUEUE_FAMILY_IGNORED: Ember's family (no ownership transfer pending).
  uint32_t owner_family() const { return owner_family_; }
  void set_owner_family(uint32_t family) { owner_family_ = family; }

 private:
  Allocator* owner_;
  Block* block_;
  VkDeviceSize offset_, size_;
  VkPipelineStageFlags write_stage_ = 0;
  VkAccessFlags write_access_ = 0;
  uint32_t owner_family_ = VK_QUEUE_FAMILY_IGNORED;
};

struct MemoryStats {
  VkDeviceSize reserved = 0;  // bytes in VkDeviceMemory blocks
  VkDeviceSize in_use = 0;    // bytes handed out
  std::size_t blocks = 0;
  std::size_t host_blocks = 0;  // of which from the host's allocator
};

// Both pools together, with what the budget and the high-water mark say.
struct MemoryTotals : MemoryStats {
  VkDeviceSize peak_reserved = 0;
  VkDeviceSize budget = 0;  // 0: none
};

// How the memory is governed (from ContextOptions).
struct MemoryOptions {
  HostAllocator host_allocator;             // empty: vkAllocateMemory
  VkDeviceSize budget = 0;                  // bytes of blocks Ember may hold; 0: no limit
  VkBufferUsageFlags tensor_usage = 0;      // extra usages of tensor blocks
};

// The usages a host may add to tensor memory (ContextOptions::tensor_buffer_usage): those needing no extra
// feature or memory flag.
constexpr VkBufferUsageFlags kHostTensorUsages =
    VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | VK_BUFFER_USAGE_INDEX_BUFFER_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT |
    VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
    VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
    VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

class Allocator {
 public:
  explicit Allocator(Context& ctx, MemoryOptions options = {});
  ~Allocator();

  std::shared_ptr<Allocation> allocate(VkDeviceSize bytes, MemoryUse use);
  // Wraps a buffer the host owns (no copy; Ember never frees it); Ember writes it only when `writable`.
  std::shared_ptr<Allocation> wrap(VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size, bool writable = false);
  // Frees every block with nothing allocated in it.
  void release_unused();
  MemoryStats stats(MemoryUse use) const;
  MemoryTotals totals() const;
  // A new budget (0: none); blocks already held stay, growth past it fails.
  void set_budget(VkDeviceSize budget);
  bool host_visible(MemoryUse use) const;

 private:
  friend class Allocation;
  struct Pool {
    std::vector<uint32_t> type_order;  // memory types to try, best first
    bool map = true;  // map host-visible blocks (false: ContextOptions::device_local_tensors)
    std::vector<std::unique_ptr<Block>> blocks;
  };
  void free(Block* block, VkDeviceSize offset, VkDeviceSize size);
  std::shared_ptr<Allocation> allocate_once(VkDeviceSize bytes, MemoryUse use);
  Block* new_block(Pool& pool, VkDeviceSize size, bool dedicated);
  VkBufferUsageFlags block_usage(const Pool& pool) const;
  VkBuffer create_block_buffer(const Pool& pool, VkDeviceSize size);
  void bind_memory(Block& b, const Pool& pool, uint32_t type, VkDeviceSize memory_offset);
  Block* new_host_block(Pool& pool, VkDeviceSize size, bool dedicated);
  // The size of a new block for a request of `size` under the budget (releasing empty blocks when it must);
  // throws DeviceOutOfMemory when even that leaves too little.
  VkDeviceSize block_size_for(VkDeviceSize size, bool dedicated);
  void release_unused_locked();
  VkDeviceSize reserved_locked() const;
  VkDeviceSize totals_in_use_locked() const;
  Pool& pool(MemoryUse use) { return use == MemoryUse::Tensor ? tensor_ : staging_; }
  const Pool& pool(MemoryUse use) const { return use == MemoryUse::Tensor ? tensor_ : staging_; }
  void destroy_block(Block* b);

  Context& ctx_;
  mutable std::mutex mutex_;
  Pool tensor_, staging_;
  VkDeviceSize alignment_ = 256;
  VkDeviceSize block_size_ = VkDeviceSize{64} << 20;
  std::vector<std::unique_ptr<Block>> wrapped_;  // external buffers (no memory of ours)
  MemoryOptions options_;
  VkDeviceSize peak_reserved_ = 0;
};

}  // namespace ember::vk
