#include "backends/vulkan/memory.hpp"

#include <algorithm>
#include <string>

#include "backends/vulkan/context.hpp"

namespace ember::vk {
namespace {

VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }

// Memory types holding all `want` flags, ordered by how many preferred flags they also have.
std::vector<uint32_t> rank_types(const VkPhysicalDeviceMemoryProperties& props,
                                 const std::vector<VkMemoryPropertyFlags>& preference) {
  std::vector<uint32_t> order;
  for (auto want : preference)
    for (uint32_t i = 0; i < props.memoryTypeCount; ++i)
      if ((props.memoryTypes[i].propertyFlags & want) == want &&
          std::find(order.begin(), order.end(), i) == order.end())
        order.push_back(i);
  return order;
}

std::string mib(VkDeviceSize b) { return std::to_string(b >> 20) + " MiB"; }

}  // namespace

Allocation::~Allocation() {
  if (owner_) owner_->free(block_, offset_, size_);
}

Allocator::Allocator(Context& ctx) : ctx_(ctx) {
  alignment_ = std::max<VkDeviceSize>(256, ctx.info().min_storage_buffer_offset_alignment);
  constexpr auto DL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  constexpr auto HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
  constexpr auto HC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  constexpr auto CA = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  const auto& props = ctx.memory_properties();
  if (ctx.info().device_local_tensors) {
    // Device memory the host cannot see comes first; where every type is host-visible (lavapipe) the tensor
    // blocks are still left unmapped, so transfers take the staging path all the same.
    for (uint32_t i = 0; i < props.memoryTypeCount; ++i)
      if ((props.memoryTypes[i].propertyFlags & (DL | HV)) == DL) tensor_.type_order.push_back(i);
    for (uint32_t i : rank_types(props, {DL, 0}))
      if (std::find(tensor_.type_order.begin(), tensor_.type_order.end(), i) == tensor_.type_order.end())
        tensor_.type_order.push_back(i);
    tensor_.map = false;
  } else if (ctx.info().unified_memory) {
    tensor_.type_order = rank_types(props, {DL | HV | HC | CA, DL | HV | HC, DL, 0});
  } else {
    tensor_.type_order = rank_types(props, {DL, 0});
  }
  staging_.type_order = rank_types(props, {HV | HC | CA, HV | HC});
  if (tensor_.type_order.empty() || staging_.type_order.empty())
    throw VulkanError("vulkan: the device exposes no usable memory type");
}

Allocator::~Allocator() {
  for (auto* p : {&tensor_, &staging_})
    for (auto& b : p->blocks) destroy_block(b.get());
}

void Allocator::destroy_block(Block* b) {
  const auto& fn = ctx_.fn();
  if (b->buffer) fn.DestroyBuffer(ctx_.device(), b->buffer, nullptr);
  if (b->memory) fn.FreeMemory(ctx_.device(), b->memory, nullptr);  // unmaps implicitly
  b->buffer = VK_NULL_HANDLE;
  b->memory = VK_NULL_HANDLE;
}

bool Allocator::host_visible(MemoryUse use) const {
  const auto& p = pool(use);
  const auto flags = ctx_.memory_properties().memoryTypes[p.type_order.front()].propertyFlags;
  return p.map && (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0;
}

Block* Allocator::new_block(Pool& pool, VkDeviceSize size, bool dedicated) {
  const auto& fn = ctx_.fn();
  VkDevice dev = ctx_.device();
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  check(fn.CreateBuffer(dev, &bi, nullptr, &buffer), "vkCreateBuffer");
  VkMemoryRequirements req;
  fn.GetBufferMemoryRequirements(dev, buffer, &req);
  VkResult last = VK_ERROR_OUT_OF_DEVICE_MEMORY;
  for (uint32_t type : pool.type_order) {
    if (!(req.memoryTypeBits & (1u << type))) continue;
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    last = fn.AllocateMemory(dev, &ai, nullptr, &memory);
    if (last != VK_SUCCESS) continue;  // heap full: try the next preferred type
    auto b = std::make_unique<Block>();
    b->memory = memory;
    b->buffer = buffer;
    b->size = size;
    b->dedicated = dedicated;
    b->memory_type = type;
    const auto flags = ctx_.memory_properties().memoryTypes[type].propertyFlags;
    b->coherent = (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
    try {
      check(fn.BindBufferMemory(dev, buffer, memory, 0), "vkBindBufferMemory");
      if (pool.map && (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
        check(fn.MapMemory(dev, memory, 0, VK_WHOLE_SIZE, 0, &b->mapped), "vkMapMemory");
    } catch (...) {
      destroy_block(b.get());
      throw;
    }
    b->free[0] = size;
    pool.blocks.push_back(std::move(b));
    return pool.blocks.back().get();
  }
  fn.DestroyBuffer(dev, buffer, nullptr);
  throw_result(last, ("vkAllocateMemory(" + mib(size) + ")").c_str());
}

std::shared_ptr<Allocation> Allocator::allocate(VkDeviceSize bytes, MemoryUse use) {
  const VkDeviceSize range = ctx_.info().max_storage_buffer_range;
  if (use == MemoryUse::Tensor && bytes > range)
    throw DeviceOutOfMemory("vulkan: a tensor of " + std::to_string(bytes) + " bytes exceeds this device's "
                            "maxStorageBufferRange (" + std::to_string(range) + " bytes), the most one shader can address");
  const VkDeviceSize size = align_up(std::max<VkDeviceSize>(bytes, 16), alignment_);
  std::lock_guard lock(mutex_);
  Pool& p = pool(use);
  auto take = [&](Block* b) -> std::shared_ptr<Allocation> {
    for (auto it = b->free.begin(); it != b->free.end(); ++it) {
      if (it->second < size) continue;
      const VkDeviceSize off = it->first, left = it->second - size;
      b->free.erase(it);
      if (left) b->free[off + size] = left;
      b->used += size;
      return std::make_shared<Allocation>(this, b, off, size);
    }
    return nullptr;
  };
  if (size <= block_size_ / 2) {
    for (auto& b : p.blocks)
      if (!b->dedicated)
        if (auto a = take(b.get())) return a;
  }
  const bool dedicated = size > block_size_ / 2;
  Block* b;
  try {
    b = new_block(p, dedicated ? size : block_size_, dedicated);
  } catch (const DeviceOutOfMemory&) {
    // Give memory held by empty blocks back and try once more before reporting out-of-memory.
    for (auto it = p.blocks.begin(); it != p.blocks.end();) {
      if ((*it)->used == 0) {
        destroy_block(it->get());
        it = p.blocks.erase(it);
      } else {
        ++it;
      }
    }
    b = new_block(p, dedicated ? size : block_size_, dedicated);
  }
  return take(b);
}

std::shared_ptr<Allocation> Allocator::wrap(VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size) {
  auto b = std::make_unique<Block>();
  b->buffer = buffer;
  b->size = offset + size;
  b->dedicated = true;
  Block* raw = b.get();
  std::lock_guard lock(mutex_);
  wrapped_.push_back(std::move(b));
  return std::make_shared<Allocation>(this, raw, offset, size);
}

void Allocator::free(Block* block, VkDeviceSize offset, VkDeviceSize size) {
  std::lock_guard lock(mutex_);
  if (!block->memory) {  // a wrapped host buffer: forget it, never destroy it
    std::erase_if(wrapped_, [&](const std::unique_ptr<Block>& b) { return b.get() == block; });
    return;
  }
  block->used -= size;
  auto [it, inserted] = block->free.emplace(offset, size);
  (void)inserted;
  // Coalesce with the following and preceding free ranges.
  auto next = std::next(it);
  if (next != block->free.end() && it->first + it->second == next->first) {
    it->second += next->second;
    block->free.erase(next);
  }
  if (it != block->free.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      block->free.erase(it);
    }
  }
  if (block->dedicated && block->used == 0) {  // big one-off buffers go straight back to the driver
    for (auto* p : {&tensor_, &staging_}) {
      auto found = std::find_if(p->blocks.begin(), p->blocks.end(), [&](auto& b) { return b.get() == block; });
      if (found != p->blocks.end()) {
        destroy_block(block);
        p->blocks.erase(found);
        return;
      }
    }
  }
}

void Allocator::release_unused() {
  std::lock_guard lock(mutex_);
  for (auto* p : {&tensor_, &staging_})
    for (auto it = p->blocks.begin(); it != p->blocks.end();) {
      if ((*it)->used == 0) {
        destroy_block(it->get());
        it = p->blocks.erase(it);
      } else {
        ++it;
      }
    }
}

MemoryStats Allocator::stats(MemoryUse use) const {
  std::lock_guard lock(mutex_);
  MemoryStats s;
  for (auto& b : pool(use).blocks) {
    s.reserved += b->size;
    s.in_use += b->used;
    ++s.blocks;
  }
  return s;
}

}  // namespace ember::vk
