#include "backends/vulkan/commands.hpp"

#include <array>

#include "backends/vulkan/context.hpp"
#include "backends/vulkan/pipelines.hpp"

namespace ember::vk {

Stream::Stream(Context& ctx, uint32_t dispatches_per_submit)
    : ctx_(ctx), per_submit_(dispatches_per_submit) {
  const auto& fn = ctx.fn();
  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = ctx.queue_family();
  check(fn.CreateCommandPool(ctx.device(), &pi, nullptr, &command_pool_), "vkCreateCommandPool");
  // A device adopted without timeline semaphores gets none (creating one would be invalid there): Ember records
  // but never submits on it (flush() refuses).
  if (ctx.timeline_semaphores()) {
    VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    ti.initialValue = 0;
    VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    si.pNext = &ti;
    check(fn.CreateSemaphore(ctx.device(), &si, nullptr, &timeline_), "vkCreateSemaphore(timeline)");
  }
  dummy_ = ctx.allocator().allocate(256, MemoryUse::Tensor);
}

Stream::~Stream() {
  try {
    finish();
  } catch (...) {
  }
  const auto& fn = ctx_.fn();
  VkDevice dev = ctx_.device();
  auto destroy = [&](Batch& b) {
    if (b.fence) fn.DestroyFence(dev, b.fence, nullptr);
    if (b.pool) fn.DestroyDescriptorPool(dev, b.pool, nullptr);
  };
  if (open_) destroy(*open_);
  for (auto& b : in_flight_) destroy(b);
  for (auto& b : idle_) destroy(b);
  dummy_.reset();
  if (command_pool_) fn.DestroyCommandPool(dev, command_pool_, nullptr);  // frees its command buffers
  if (timeline_) fn.DestroySemaphore(dev, timeline_, nullptr);
}

void Stream::recycle(bool block) {
  const auto& fn = ctx_.fn();
  while (!in_flight_.empty()) {
    Batch& b = in_flight_.front();
    VkResult r = block ? fn.WaitForFences(ctx_.device(), 1, &b.fence, VK_TRUE, UINT64_MAX)
                       : fn.GetFenceStatus(ctx_.device(), b.fence);
    if (r == VK_NOT_READY) return;
    check(r, "vkWaitForFences");
    b.keep.clear();  // allocations the GPU used can be reused now
    check(fn.ResetFences(ctx_.device(), 1, &b.fence), "vkResetFences");
    check(fn.ResetDescriptorPool(ctx_.device(), b.pool, 0), "vkResetDescriptorPool");
    check(fn.ResetCommandBuffer(b.cb, 0), "vkResetCommandBuffer");
    b.dispatches = b.commands = 0;
    idle_.push_back(std::move(b));
    in_flight_.pop_front();
    if (block) return;  // one batch freed is enough to go on
  }
}

Stream::Batch& Stream::current() {
  if (open_) return *open_;
  recycle(false);
  // Bound the number of batches in flight so memory held by them stays bounded.
  if (idle_.empty() && in_flight_.size() >= 4) recycle(true);
  const auto& fn = ctx_.fn();
  VkDevice dev = ctx_.device();
  Batch b;
  if (!idle_.empty()) {
    b = std::move(idle_.back());
    idle_.pop_back();
  } else {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = command_pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    check(fn.AllocateCommandBuffers(dev, &ai, &b.cb), "vkAllocateCommandBuffers");
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, (per_submit_ + 1) * Pipelines::kBindings};
    VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pi.maxSets = per_submit_ + 1;
    pi.poolSizeCount = 1;
    pi.pPoolSizes = &size;
    check(fn.CreateDescriptorPool(dev, &pi, nullptr, &b.pool), "vkCreateDescriptorPool");
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(fn.CreateFence(dev, &fi, nullptr, &b.fence), "vkCreateFence");
  }
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(fn.BeginCommandBuffer(b.cb, &bi), "vkBeginCommandBuffer");
  b.recording = true;
  open_ = std::move(b);
  return *open_;
}

bool Stream::overlaps(const std::vector<Range>& list, const Range& r) const {
  for (const auto& x : list)
    if (x.buffer == r.buffer && x.begin < r.end && r.begin < x.end) return true;
  return false;
}

VkCommandBuffer Stream::begin_command(std::span<const BufferArg> args) {
  // Memory of another context (another device, or another VkDevice handle of the same GPU) cannot be bound here.
  for (const auto& a : args)
    if (a.alloc->owner() != &ctx_.allocator())
      throw ArgumentError("vulkan: an op mixes tensors of different devices (move them with to_device first)");
  Batch& b = current();
  bool hazard = false;
  for (const auto& a : args) {
    Range r{a.alloc->buffer(), a.alloc->offset(), a.alloc->offset() + a.alloc->size()};
    if (overlaps(pending_writes_, r) || (a.write && overlaps(pending_reads_, r))) hazard = true;
  }
  if (hazard) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                       VK_ACCESS_TRANSFER_WRITE_BIT;
    const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    ctx_.fn().CmdPipelineBarrier(b.cb, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
    pending_writes_.clear();
    pending_reads_.clear();
    ++stats_.barriers;
  }
  for (const auto& a : args) {
    Range r{a.alloc->buffer(), a.alloc->offset(), a.alloc->offset() + a.alloc->size()};
    (a.write ? pending_writes_ : pending_reads_).push_back(r);
    b.keep.push_back(a.alloc);
  }
  return b.cb;
}

void Stream::end_command(std::span<const BufferArg>) {
  Batch& b = *open_;
  ++b.commands;
  if (++b.dispatches >= per_submit_) flush();
}

void Stream::dispatch(VkPipeline pipeline, std::span<const BufferArg> args, const void* push, uint32_t push_bytes,
                      uint32_t gx, uint32_t gy, uint32_t gz) {
  if (args.size() > Pipelines::kBindings) throw VulkanError("vulkan: too many buffers for one dispatch");
  if (push_bytes > Pipelines::kPushBytes) throw VulkanError("vulkan: push constants over 128 bytes");
  if (gx == 0 || gy == 0 || gz == 0) return;
  const auto& fn = ctx_.fn();
  VkCommandBuffer cb = begin_command(args);
  Batch& b = *open_;
  VkDescriptorSetLayout layout = ctx_.pipelines().set_layout();
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = b.pool;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  check(fn.AllocateDescriptorSets(ctx_.device(), &ai, &set), "vkAllocateDescriptorSets");
  std::array<VkDescriptorBufferInfo, Pipelines::kBindings> infos{};
  std::array<VkWriteDescriptorSet, Pipelines::kBindings> writes{};
  for (uint32_t i = 0; i < Pipelines::kBindings; ++i) {
    const Allocation& a = i < args.size() ? *args[i].alloc : *dummy_;
    infos[i] = {a.buffer(), a.offset(), a.size()};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  fn.UpdateDescriptorSets(ctx_.device(), Pipelines::kBindings, writes.data(), 0, nullptr);
  fn.CmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  fn.CmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, ctx_.pipelines().layout(), 0, 1, &set, 0, nullptr);
  if (push_bytes)
    fn.CmdPushConstants(cb, ctx_.pipelines().layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
  fn.CmdDispatch(cb, gx, gy, gz);
  ++stats_.dispatches;
  end_command(args);
}

void Stream::copy(const std::shared_ptr<Allocation>& src, VkDeviceSize src_offset,
                  const std::shared_ptr<Allocation>& dst, VkDeviceSize dst_offset, VkDeviceSize bytes) {
  if (bytes == 0) return;
  const std::array<BufferArg, 2> args{BufferArg{src, false}, BufferArg{dst, true}};
  VkCommandBuffer cb = begin_command(args);
  VkBufferCopy region{src->offset() + src_offset, dst->offset() + dst_offset, bytes};
  ctx_.fn().CmdCopyBuffer(cb, src->buffer(), dst->buffer(), 1, &region);
  end_command(args);
}

void Stream::retain(std::shared_ptr<void> obj) { current().keep.push_back(std::move(obj)); }

void Stream::wait_for(VkSemaphore timeline, uint64_t value) { host_waits_.emplace_back(timeline, value); }

uint64_t Stream::flush() {
  if (!open_ && host_waits_.empty()) return submitted_;
  if (!ctx_.timeline_semaphores()) throw DeviceError(kNoTimelineMessage);
  Batch& b = current();
  const auto& fn = ctx_.fn();
  // Make every write of this batch visible to the host (reads of mapped memory after the fence) and to later work.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  fn.CmdPipelineBarrier(b.cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                        VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  check(fn.EndCommandBuffer(b.cb), "vkEndCommandBuffer");
  b.recording = false;
  b.value = submitted_ + 1;
  std::vector<VkSemaphore> wait_sems;
  std::vector<uint64_t> wait_values;
  std::vector<VkPipelineStageFlags> wait_stages;
  for (auto& [s, v] : host_waits_) {
    wait_sems.push_back(s);
    wait_values.push_back(v);
    wait_stages.push_back(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT);
  }
  VkTimelineSemaphoreSubmitInfo ti{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  ti.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
  ti.pWaitSemaphoreValues = wait_values.data();
  ti.signalSemaphoreValueCount = 1;
  ti.pSignalSemaphoreValues = &b.value;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.pNext = &ti;
  si.waitSemaphoreCount = static_cast<uint32_t>(wait_sems.size());
  si.pWaitSemaphores = wait_sems.data();
  si.pWaitDstStageMask = wait_stages.data();
  si.commandBufferCount = 1;
  si.pCommandBuffers = &b.cb;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &timeline_;
  VkResult r = VK_SUCCESS;
  ctx_.with_queue([&](VkQueue q) { r = fn.QueueSubmit(q, 1, &si, b.fence); });
  if (r != VK_SUCCESS) {
    // The batch never ran: drop it (its command buffer is reset on reuse) and report.
    b.keep.clear();
    fn.ResetCommandBuffer(b.cb, 0);
    fn.ResetDescriptorPool(ctx_.device(), b.pool, 0);
    idle_.push_back(std::move(b));
    open_.reset();
    host_waits_.clear();
    throw_result(r, "vkQueueSubmit");
  }
  host_waits_.clear();
  submitted_ = b.value;
  ++stats_.submits;
  in_flight_.push_back(std::move(b));
  open_.reset();
  return submitted_;
}

void Stream::wait(uint64_t v) {
  while (!in_flight_.empty() && in_flight_.front().value <= v) recycle(true);
}

void Stream::finish() {
  flush();
  ++stats_.waits;
  while (!in_flight_.empty()) recycle(true);
  // Everything has executed: no earlier access can conflict with what comes next.
  pending_writes_.clear();
  pending_reads_.clear();
}

}  // namespace ember::vk
