#include "backends/vulkan/commands.hpp"

#include "backends/vulkan/check_sink.hpp"

#include <fmt/format.h>

#include <array>
#include <cstring>

#include "backends/vulkan/context.hpp"
#include "backends/vulkan/pipelines.hpp"

namespace ember::vk {

namespace {
// Descriptor sets per pool when Ember never submits by itself (a batch then takes as many pools as it needs).
constexpr uint32_t kSetsPerGrowingPool = 256;
}  // namespace

Stream::Stream(Context& ctx, uint32_t dispatches_per_submit)
    : ctx_(ctx),
      per_submit_(dispatches_per_submit),
      sets_per_pool_(dispatches_per_submit ? dispatches_per_submit + 1 : kSetsPerGrowingPool) {
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
    for (VkDescriptorPool p : b.pools) fn.DestroyDescriptorPool(dev, p, nullptr);
  };
  if (open_) destroy(*open_);
  for (auto& b : in_flight_) destroy(b);
  for (auto& b : idle_) destroy(b);
  for (auto& b : frames_) destroy(b);
  for (VkDescriptorPool p : spare_pools_) fn.DestroyDescriptorPool(dev, p, nullptr);
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
    ctx_.check(r, "vkWaitForFences");  // a loss is remembered by the context (fail fast afterwards)
    b.keep.clear();  // allocations the GPU used can be reused now
    check(fn.ResetFences(ctx_.device(), 1, &b.fence), "vkResetFences");
    for (VkDescriptorPool p : b.pools) check(fn.ResetDescriptorPool(ctx_.device(), p, 0), "vkResetDescriptorPool");
    b.pool = 0;
    b.sets_in_pool = 0;
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
  // With Ember's own flush policy, bound the batches in flight so the memory they hold stays bounded. Without one
  // (dispatches_per_submit == 0) the caller decides when work runs and an op never waits: more batches instead.
  if (per_submit_ > 0 && idle_.empty() && in_flight_.size() >= 4) recycle(true);
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

VkDescriptorPool Stream::take_pool() {
  if (!spare_pools_.empty()) {
    VkDescriptorPool p = spare_pools_.back();
    spare_pools_.pop_back();
    return p;
  }
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, sets_per_pool_ * Pipelines::kBindings};
  VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pi.maxSets = sets_per_pool_;
  pi.poolSizeCount = 1;
  pi.pPoolSizes = &size;
  VkDescriptorPool p = VK_NULL_HANDLE;
  check(ctx_.fn().CreateDescriptorPool(ctx_.device(), &pi, nullptr, &p), "vkCreateDescriptorPool");
  return p;
}

// Pools are switched before one is full (never a failed allocation): a batch that outgrows its pools gets another.
VkDescriptorSet Stream::allocate_set(Batch& b) {
  if (b.pools.empty()) b.pools.push_back(take_pool());
  if (b.sets_in_pool == sets_per_pool_) {
    if (++b.pool == b.pools.size()) b.pools.push_back(take_pool());
    b.sets_in_pool = 0;
  }
  VkDescriptorSetLayout layout = ctx_.pipelines().set_layout();
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = b.pools[b.pool];
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  check(ctx_.fn().AllocateDescriptorSets(ctx_.device(), &ai, &set), "vkAllocateDescriptorSets");
  ++b.sets_in_pool;
  return set;
}

// A released frame's pools go back to the spare list (reset), for later frames and batches.
void Stream::release_pools(Batch& b) {
  for (VkDescriptorPool p : b.pools) {
    check(ctx_.fn().ResetDescriptorPool(ctx_.device(), p, 0), "vkResetDescriptorPool");
    spare_pools_.push_back(p);
  }
  b.pools.clear();
  b.pool = 0;
  b.sets_in_pool = 0;
}

bool Stream::overlaps(const std::vector<Range>& list, const Range& r) const {
  for (const auto& x : list)
    if (x.buffer == r.buffer && x.begin < r.end && r.begin < x.end) return true;
  return false;
}

VkCommandBuffer Stream::begin_command(std::span<const BufferArg> args) {
  ctx_.ensure_alive();  // a lost device records nothing more
  // Memory of another context (another device, or another VkDevice handle of the same GPU) cannot be bound here.
  for (const auto& a : args) {
    if (a.alloc->owner() != &ctx_.allocator())
      throw ArgumentError("vulkan: an op mixes tensors of different devices (move them with to_device first)");
    a.alloc->check_use(a.write, ctx_.queue_family());  // read-only wrapped buffers, ranges the host owns
  }
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
    // What a host barrier after Ember starts from (ember_vulkan_buffer_state); copy() re-notes its write as transfer.
    if (a.write) a.alloc->note_write(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
  }
  return b.cb;
}

void Stream::end_command(std::span<const BufferArg>) {
  Batch& b = *open_;
  ++b.commands;
  // Ember's own flush policy; never in record mode (the host submits) nor with dispatches_per_submit == 0.
  if (++b.dispatches >= per_submit_ && per_submit_ > 0 && !b.host_owned) flush();
}

void Stream::dispatch(VkPipeline pipeline, std::span<const BufferArg> args, const void* push, uint32_t push_bytes,
                      uint32_t gx, uint32_t gy, uint32_t gz) {
  if (args.size() > Pipelines::kBindings) throw VulkanError("vulkan: too many buffers for one dispatch");
  if (push_bytes > Pipelines::kPushBytes) throw VulkanError("vulkan: push constants over 128 bytes");
  if (gx == 0 || gy == 0 || gz == 0) return;
  if (capture_) return capture_->dispatch(pipeline, args, push, push_bytes, gx, gy, gz);
  const auto& fn = ctx_.fn();
  VkCommandBuffer cb = begin_command(args);
  VkDescriptorSet set = allocate_set(*open_);
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
  if (capture_) return capture_->copy(src, src_offset, dst, dst_offset, bytes);
  const std::array<BufferArg, 2> args{BufferArg{src, false}, BufferArg{dst, true}};
  VkCommandBuffer cb = begin_command(args);
  VkBufferCopy region{src->offset() + src_offset, dst->offset() + dst_offset, bytes};
  ctx_.fn().CmdCopyBuffer(cb, src->buffer(), dst->buffer(), 1, &region);
  dst->note_write(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
  end_command(args);
}

void Stream::retain(std::shared_ptr<void> obj) {
  if (capture_) return capture_->keep(std::move(obj));
  current().keep.push_back(std::move(obj));
}

void Stream::wait_for(VkSemaphore timeline, uint64_t value) {
  ctx_.ensure_alive();
  refuse_in_record_mode("waiting for a host semaphore (the host's own submit of its command buffer waits for it)");
  host_waits_.emplace_back(timeline, value);
}

void Stream::refuse_in_record_mode(const char* what) const {
  if (recording())
    throw VulkanError(fmt::format(
        "vulkan: {} in host-record mode (frame {}): Ember never submits or waits between ember_vulkan_record_begin "
        "and ember_vulkan_record_end; read results after the host's submit completed, outside record mode",
        what, *recording_frame_));
}

uint64_t Stream::flush() {
  if (capture_) {
    capture_->reject("a submit or a CPU round trip (it waits for the GPU, e.g. to read a result back)");
    return submitted_;
  }
  ctx_.ensure_alive();  // never submits to, or waits on, a lost device
  refuse_in_record_mode("a flush (a submit of Ember's own, a read of a tensor to the CPU, or a wait)");
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
    for (VkDescriptorPool p : b.pools) fn.ResetDescriptorPool(ctx_.device(), p, 0);
    b.pool = 0;
    b.sets_in_pool = 0;
    idle_.push_back(std::move(b));
    open_.reset();
    host_waits_.clear();
    ctx_.throw_result(r, "vkQueueSubmit");
  }
  host_waits_.clear();
  submitted_ = b.value;
  ++stats_.submits;
  in_flight_.push_back(std::move(b));
  open_.reset();
  return submitted_;
}

void Stream::wait(uint64_t v) {
  if (capture_) return capture_->reject("a CPU round trip (it waits for the GPU)");
  ctx_.ensure_alive();
  refuse_in_record_mode("a wait for Ember's timeline");
  while (!in_flight_.empty() && in_flight_.front().value <= v) recycle(true);
}

void Stream::finish() {
  if (capture_) return capture_->reject("a CPU round trip (it waits for the GPU, e.g. to read a result back)");
  flush();  // refuses in record mode
  ++stats_.waits;
  while (!in_flight_.empty()) recycle(true);
  // Everything has executed: no earlier access can conflict with what comes next.
  pending_writes_.clear();
  pending_reads_.clear();
}

// ---------------------------------------------------------------- host-record mode (issue 17, part 1)

void Stream::record_begin(VkCommandBuffer cb, uint32_t queue_family, uint64_t frame_index) {
  ctx_.ensure_alive();  // the host records nothing of Ember's for a lost device
  if (recording())
    throw ArgumentError(fmt::format("vulkan record_begin: frame {} is still being recorded (call record_end first)",
                                    *recording_frame_));
  if (!cb) throw ArgumentError("vulkan record_begin: vk_command_buffer is NULL");
  if (queue_family != ctx_.queue_family())
    throw ArgumentError(fmt::format(
        "vulkan record_begin: queue_family {} is not the family of the adopted queue ({}): Ember's buffers are "
        "owned by that family",
        queue_family, ctx_.queue_family()));
  if (last_frame_ && frame_index < *last_frame_)
    throw ArgumentError(fmt::format("vulkan record_begin: frame_index {} is below the last recorded frame {}",
                                    frame_index, *last_frame_));
  if (safe_frame_ && frame_index <= *safe_frame_)
    throw ArgumentError(fmt::format(
        "vulkan record_begin: frame_index {} is not above the safe frame {} the host reported (its work would be "
        "taken for completed)",
        frame_index, *safe_frame_));
  // Work Ember recorded into a batch of its own must not be reordered after the host's frame: the caller submits
  // it first (ember_vulkan_submit), as Ember never submits silently here.
  if ((open_ && open_->commands > 0) || !host_waits_.empty())
    throw ArgumentError(
        "vulkan record_begin: Ember has recorded work of its own that was not submitted (uploads, ops before "
        "record mode): call ember_vulkan_submit first");
  if (open_) {  // an empty batch of Ember's own: give it back unused
    ctx_.fn().EndCommandBuffer(open_->cb);
    ctx_.fn().ResetCommandBuffer(open_->cb, 0);
    open_->keep.clear();
    idle_.push_back(std::move(*open_));
    open_.reset();
  }
  Batch b;
  b.cb = cb;
  b.host_owned = true;
  b.value = frame_index;
  // The host's writes before this point (any stage: transfers, compute, graphics) happen-before and are visible to
  // Ember's shaders and copies; the execution dependency also orders the host's earlier reads before Ember's writes.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                     VK_ACCESS_TRANSFER_WRITE_BIT;
  ctx_.fn().CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                               VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                               nullptr, 0, nullptr);
  ++stats_.barriers;
  pending_writes_.clear();
  pending_reads_.clear();
  open_ = std::move(b);
  recording_frame_ = frame_index;
  last_frame_ = frame_index;
}

void Stream::record_end() {
  if (!recording()) throw ArgumentError("vulkan record_end: not recording (call record_begin first)");
  Batch& b = *open_;
  // Ember's writes happen-before and are visible to everything the host records later in this command buffer (any
  // stage and access: vertex / index / indirect reads, shaders, transfers), and to host reads of the check flags
  // after the frame's work completed.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_HOST_READ_BIT;
  ctx_.fn().CmdPipelineBarrier(b.cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                               VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr,
                               0, nullptr);
  ++stats_.barriers;
  pending_writes_.clear();
  pending_reads_.clear();
  b.cb = VK_NULL_HANDLE;  // the host's: Ember keeps no reference to it
  frames_.push_back(std::move(b));
  open_.reset();
  recording_frame_.reset();
}

void Stream::safe_frame(uint64_t safe_frame_index) {
  if (!safe_frame_ || safe_frame_index > *safe_frame_) safe_frame_ = safe_frame_index;
  while (!frames_.empty() && frames_.front().value <= *safe_frame_) {
    Batch& b = frames_.front();
    b.keep.clear();
    release_pools(b);
    frames_.pop_front();
  }
}

PendingFrames Stream::pending_frames() const {
  PendingFrames p;
  for (const Batch& b : frames_) {
    ++p.frames;
    p.resources += b.keep.size() + b.pools.size();
  }
  return p;
}

// ---------------------------------------------------------------- deferred checks (issue 17, part 3)

std::shared_ptr<Allocation> Stream::new_check_flag() {
  auto flag = ctx_.allocator().allocate(2 * sizeof(int64_t), MemoryUse::Staging);
  if (!flag->mapped()) throw VulkanError("vulkan: staging memory is not host-visible (deferred check flag)");
  std::memset(flag->mapped(), 0, 2 * sizeof(int64_t));  // host writes before the submit are visible to it
  return flag;
}

void Stream::defer_check(DeferredCheck check) {
  if (capture_) {
    if (auto* sink = dynamic_cast<CheckSink*>(capture_)) return sink->defer_check(std::move(check));  // a plan's
    return capture_->reject("a check whose error word is read later (this capture cannot own one)");
  }
  check.recorded = recording();
  check.tag = recording() ? *recording_frame_ : submitted_ + 1;  // the open batch's timeline value once submitted
  current().keep.push_back(check.flag);
  checks_.push_back(std::move(check));
}

bool Stream::completed(uint64_t value) {
  if (value > submitted_) return false;
  recycle(false);
  if (in_flight_.empty() || value < in_flight_.front().value) return true;
  uint64_t reached = 0;
  // No timeline semaphore (adopted without them): Ember never submits there, so the fences say everything.
  if (timeline_)
    ctx_.check(ctx_.fn().GetSemaphoreCounterValue(ctx_.device(), timeline_, &reached), "vkGetSemaphoreCounterValue");
  return value <= reached;
}

void Stream::poll_errors() {
  ctx_.ensure_alive();  // no fence or semaphore query on a lost device
  if (checks_.empty()) return;
  auto completed_check = [&](const DeferredCheck& c) {
    if (c.recorded) return safe_frame_ && c.tag <= *safe_frame_;
    return completed(c.tag);
  };
  for (auto it = checks_.begin(); it != checks_.end();) {
    if (!completed_check(*it)) {
      ++it;
      continue;
    }
    const DeferredCheck c = std::move(*it);
    it = checks_.erase(it);
    throw_if_failed(ctx_, c,
                    c.recorded ? fmt::format("recorded in frame {}", c.tag)
                               : fmt::format("submitted as timeline value {}", c.tag));
  }
}

void throw_if_failed(const Context& ctx, const DeferredCheck& c, const std::string& where) {
  if (!c.flag->coherent()) {
    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    range.memory = c.flag->memory();
    range.size = VK_WHOLE_SIZE;
    check(ctx.fn().InvalidateMappedMemoryRanges(ctx.device(), 1, &range), "vkInvalidateMappedMemoryRanges");
  }
  // Two Int elements: int64, or int32 on a device without shaderInt64 (shaders/check_indices.comp).
  int64_t words[2];
  if (ctx.int64()) {
    std::memcpy(words, c.flag->mapped(), sizeof words);
  } else {
    int32_t narrow[2];
    std::memcpy(narrow, c.flag->mapped(), sizeof narrow);
    words[0] = narrow[0];
    words[1] = narrow[1];
  }
  if (words[0] == 0) return;
  if (c.kind == CheckKind::DivisionByZero)
    throw ArgumentError(fmt::format("{}: integer division by zero (device-side check, {})", c.op, where));
  throw IndexError(fmt::format("{}: index {} out of range for dim {} of size {} (device-side check, {})", c.op,
                               words[1], c.dim, c.size, where));
}

}  // namespace ember::vk
