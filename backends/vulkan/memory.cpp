#include "backends/vulkan/memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "backends/vulkan/commands.hpp"
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

void Allocation::check_use(bool write, uint32_t ember_family) const {
  if (write && !writable())
    throw ArgumentError("vulkan: an op would write a read-only wrapped host buffer (wrap it with "
                        "EMBER_VULKAN_WRAP_WRITABLE to let Ember write it)");
  if (owner_family_ != VK_QUEUE_FAMILY_IGNORED && owner_family_ != ember_family)
    throw ArgumentError(fmt::format("vulkan: the buffer range was released to queue family {} "
                                    "(ember_vulkan_buffer_release); acquire it back first "
                                    "(ember_vulkan_buffer_acquire)",
                                    owner_family_));
}

Allocator::Allocator(Context& ctx, MemoryOptions options) : ctx_(ctx), options_(std::move(options)) {
  if (options_.tensor_usage & ~kHostTensorUsages)
    throw ArgumentError(fmt::format("vulkan: tensor_buffer_usage {:#x} has bits Ember cannot add (allowed: vertex, "
                                    "index, indirect, uniform, texel, storage, transfer: {:#x})",
                                    options_.tensor_usage, kHostTensorUsages));
  if (options_.host_allocator && !options_.host_allocator.release)
    throw ArgumentError("vulkan: a host allocator needs both callbacks (allocate and free)");
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
  if (b->host_memory) options_.host_allocator.release(b->grant);  // the host's memory (and mapping) stays its own
  else if (b->memory) fn.FreeMemory(ctx_.device(), b->memory, nullptr);  // unmaps implicitly
  b->buffer = VK_NULL_HANDLE;
  b->memory = VK_NULL_HANDLE;
  b->host_memory = false;
}

bool Allocator::host_visible(MemoryUse use) const {
  const auto& p = pool(use);
  const auto flags = ctx_.memory_properties().memoryTypes[p.type_order.front()].propertyFlags;
  return p.map && (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0;
}

VkBufferUsageFlags Allocator::block_usage(const Pool& pool) const {
  constexpr VkBufferUsageFlags own =
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  return &pool == &tensor_ ? own | options_.tensor_usage : own;  // the host binds tensors, never staging
}

VkBuffer Allocator::create_block_buffer(const Pool& pool, VkDeviceSize size) {
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = block_usage(pool);
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  check(ctx_.fn().CreateBuffer(ctx_.device(), &bi, nullptr, &buffer), "vkCreateBuffer");
  return buffer;
}

// Binds b.buffer to b.memory at memory_offset and maps it (Ember's own memory) when the pool wants host pointers.
void Allocator::bind_memory(Block& b, const Pool& pool, uint32_t type, VkDeviceSize memory_offset) {
  const auto& fn = ctx_.fn();
  b.memory_type = type;
  const auto flags = ctx_.memory_properties().memoryTypes[type].propertyFlags;
  b.coherent = (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
  check(fn.BindBufferMemory(ctx_.device(), b.buffer, b.memory, memory_offset), "vkBindBufferMemory");
  if (!b.host_memory && pool.map && (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
    check(fn.MapMemory(ctx_.device(), b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
}

// A block whose memory the host's allocator gives: Ember still owns the VkBuffer spanning it.
Block* Allocator::new_host_block(Pool& pool, VkDeviceSize size, bool dedicated) {
  constexpr auto HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
  constexpr auto HC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  VkBuffer buffer = create_block_buffer(pool, size);
  VkMemoryRequirements req;
  ctx_.fn().GetBufferMemoryRequirements(ctx_.device(), buffer, &req);
  HostAllocator::Request r;
  r.size = req.size;
  r.alignment = req.alignment;
  for (uint32_t type : pool.type_order) r.memory_type_bits |= 1u << type;
  r.memory_type_bits &= req.memoryTypeBits;
  r.staging = &pool == &staging_;
  r.required = r.staging ? HV | HC : 0;  // Ember writes staging memory with memcpy and never flushes
  r.preferred = ctx_.memory_properties().memoryTypes[pool.type_order.front()].propertyFlags;
  r.mapped = pool.map;
  HostAllocator::Grant g;
  const VkResult result = options_.host_allocator.allocate(r, g);
  auto b = std::make_unique<Block>();
  b->buffer = buffer;
  b->size = size;
  b->dedicated = dedicated;
  b->usage = block_usage(pool);
  if (result != VK_SUCCESS) {
    destroy_block(b.get());
    throw_result(result, fmt::format("the host allocator ({} bytes)", r.size).c_str());
  }
  b->memory = g.memory;
  b->host_memory = true;
  b->grant = g;
  try {
    if (!g.memory) throw VulkanError("vulkan: the host allocator returned success without memory");
    if (g.memory_type >= ctx_.memory_properties().memoryTypeCount || !(r.memory_type_bits & (1u << g.memory_type)))
      throw VulkanError(fmt::format("vulkan: the host allocator returned memory type {}, not one of the request's "
                                    "memory_type_bits {:#x}", g.memory_type, r.memory_type_bits));
    if (g.offset % r.alignment != 0)
      throw VulkanError(fmt::format("vulkan: the host allocator returned offset {}, not a multiple of the "
                                    "request's alignment {}", g.offset, r.alignment));
    const auto flags = ctx_.memory_properties().memoryTypes[g.memory_type].propertyFlags;
    if ((flags & r.required) != r.required)
      throw VulkanError(fmt::format("vulkan: the host allocator returned memory type {} without the required "
                                    "property flags {:#x}", g.memory_type, r.required));
    // Mapped memory Ember writes with memcpy must be coherent; a non-coherent type goes through staging instead.
    const bool usable_map = pool.map && (flags & HV) && (flags & HC);
    if (usable_map && !g.mapped)
      throw VulkanError("vulkan: the host allocator returned host-visible memory without the mapped pointer the "
                        "request asked for");
    b->mapped = usable_map ? g.mapped : nullptr;
    bind_memory(*b, pool, g.memory_type, g.offset);
  } catch (...) {
    destroy_block(b.get());
    throw;
  }
  b->free[0] = size;
  pool.blocks.push_back(std::move(b));
  return pool.blocks.back().get();
}

Block* Allocator::new_block(Pool& pool, VkDeviceSize size, bool dedicated) {
  if (options_.host_allocator) return new_host_block(pool, size, dedicated);
  const auto& fn = ctx_.fn();
  VkDevice dev = ctx_.device();
  VkBuffer buffer = create_block_buffer(pool, size);
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
    b->usage = block_usage(pool);
    try {
      bind_memory(*b, pool, type, 0);
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
  try {
    return allocate_once(bytes, use);
  } catch (const DeviceOutOfMemory&) {
    if (!ctx_.has_stream()) throw;
    std::lock_guard lock(ctx_.mutex());
    // Where the caller owns the flush policy (host-record mode, max_dispatches_per_submit = 0) Ember never blocks.
    if (ctx_.stream().defers_checks()) throw;
  }
  // Recorded and in-flight work holds memory (staging of uploads, temporaries of ops) until it has executed: under
  // a tight budget, finish it and try once more before failing.
  {
    std::lock_guard lock(ctx_.mutex());
    ctx_.stream().finish();
  }
  return allocate_once(bytes, use);
}

std::shared_ptr<Allocation> Allocator::allocate_once(VkDeviceSize bytes, MemoryUse use) {
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
    b = new_block(p, block_size_for(size, dedicated), dedicated);
  } catch (const DeviceOutOfMemory&) {
    // Give memory held by empty blocks back and try once more before reporting out-of-memory.
    release_unused_locked();
    b = new_block(p, block_size_for(size, dedicated), dedicated);
  }
  peak_reserved_ = std::max(peak_reserved_, reserved_locked());
  return take(b);
}

VkDeviceSize Allocator::block_size_for(VkDeviceSize size, bool dedicated) {
  if (!options_.budget) return dedicated ? size : block_size_;
  // Under a budget blocks are at most a quarter of it (so tensor and staging memory both find room), and a block
  // takes what is left when a full one would not fit; empty blocks are released before giving up.
  const VkDeviceSize quarter = std::max(options_.budget / 4 / alignment_ * alignment_, alignment_);
  const VkDeviceSize wanted = dedicated ? size : std::min(block_size_, std::max(size, quarter));
  auto fitting = [&]() -> VkDeviceSize {
    const VkDeviceSize held = reserved_locked();
    const VkDeviceSize left = held < options_.budget ? options_.budget - held : 0;
    if (wanted <= left) return wanted;
    const VkDeviceSize trimmed = left / alignment_ * alignment_;
    return trimmed >= size ? trimmed : 0;
  };
  VkDeviceSize n = fitting();
  if (!n) {
    release_unused_locked();
    n = fitting();
  }
  if (!n)
    throw DeviceOutOfMemory(fmt::format("vulkan: memory budget exceeded: a request of {} bytes does not fit in the "
                                        "budget of {} bytes ({} held in {} blocks, {} of them in use); free tensors, "
                                        "or raise the budget",
                                        size, options_.budget, reserved_locked(),
                                        tensor_.blocks.size() + staging_.blocks.size(),
                                        totals_in_use_locked()));
  return n;
}

VkDeviceSize Allocator::reserved_locked() const {
  VkDeviceSize n = 0;
  for (auto* p : {&tensor_, &staging_})
    for (auto& b : p->blocks) n += b->size;
  return n;
}

VkDeviceSize Allocator::totals_in_use_locked() const {
  VkDeviceSize n = 0;
  for (auto* p : {&tensor_, &staging_})
    for (auto& b : p->blocks) n += b->used;
  return n;
}

std::shared_ptr<Allocation> Allocator::wrap(VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size, bool writable) {
  auto b = std::make_unique<Block>();
  b->buffer = buffer;
  b->size = offset + size;
  b->dedicated = true;
  b->wrapped_writable = writable;
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
  release_unused_locked();
}

void Allocator::release_unused_locked() {
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
    if (b->host_memory) ++s.host_blocks;
  }
  return s;
}

MemoryTotals Allocator::totals() const {
  MemoryTotals t;
  for (auto use : {MemoryUse::Tensor, MemoryUse::Staging}) {
    const MemoryStats s = stats(use);
    t.reserved += s.reserved;
    t.in_use += s.in_use;
    t.blocks += s.blocks;
    t.host_blocks += s.host_blocks;
  }
  std::lock_guard lock(mutex_);
  t.peak_reserved = peak_reserved_;
  t.budget = options_.budget;
  return t;
}

void Allocator::set_budget(VkDeviceSize budget) {
  std::lock_guard lock(mutex_);
  options_.budget = budget;
}

}  // namespace ember::vk
