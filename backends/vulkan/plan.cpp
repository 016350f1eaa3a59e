#include "backends/vulkan/plan.hpp"

#include "backends/vulkan/launch.hpp"
#include "backends/vulkan/plan_memory.hpp"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <mutex>

namespace ember::vk {
namespace {

// A deferred check's flag: two Int words (verdict, bad value), int64 or int32 (Stream::new_check_flag's size).
constexpr VkDeviceSize kErrorWordBytes = 2 * sizeof(int64_t);
constexpr VkPipelineStageFlags kWork = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kWorkWrites = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
constexpr VkAccessFlags kWorkAccess =
    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

void barrier(const Functions& fn, VkCommandBuffer cb, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
             VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = src_access;
  mb.dstAccessMask = dst_access;
  fn.CmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

// f32 -> f16 (shaders/to_f16.comp): the f16 copies of the weights a plan's GEMMs read (f16 storage).
EMBER_SHADER_WORDS(kToF16)
#include "to_f16.spv.inc"
;
EMBER_SHADER_DEF(kToF16)

}  // namespace

Plan::Plan(std::shared_ptr<Context> ctx) : ctx_(std::move(ctx)) {}

Plan::~Plan() {
  abort();
  if (secondary_pool_) ctx_->fn().DestroyCommandPool(ctx_->device(), secondary_pool_, nullptr);  // frees secondary_
  if (pool_) ctx_->fn().DestroyDescriptorPool(ctx_->device(), pool_, nullptr);  // frees the sets
}

void Plan::refuse_in_record_mode(Context& ctx) {
  std::lock_guard lock(ctx.mutex());
  if (const auto frame = ctx.stream().recording_frame())
    throw VulkanError(fmt::format(
        "vulkan plan: cannot build a plan or warm up in host-record mode (frame {} is being recorded): building "
        "waits for the GPU, which Ember never does between ember_vulkan_record_begin and _end; build plans during "
        "loading, outside record mode, and record them into any frame",
        *frame));
}

void Plan::begin() {
  refuse_in_record_mode(*ctx_);
  std::lock_guard lock(ctx_->mutex());
  if (ctx_->stream().capture())
    throw ArgumentError("vulkan plan: the device is already capturing a plan (end that capture first)");
  ctx_->stream().finish();
  dummy_ = ctx_->allocator().allocate(256, MemoryUse::Tensor);
  ctx_->stream().set_capture(this);
  capturing_ = true;
}

void Plan::check_capturing(const char* what) const {
  if (!capturing_) throw ArgumentError(fmt::format("vulkan plan: {} outside a capture", what));
}

std::shared_ptr<Allocation> Plan::add_input(VkDeviceSize bytes) {
  check_capturing("adding an input");
  auto a = ctx_->allocator().allocate(bytes ? bytes : 4, MemoryUse::Tensor);
  inputs_.push_back({a, bytes});
  return a;
}

void Plan::abort() noexcept {
  if (!capturing_) return;
  std::lock_guard lock(ctx_->mutex());
  if (ctx_->stream().capture() == this) ctx_->stream().set_capture(nullptr);
  capturing_ = false;
}

void Plan::reject(const char* what) {
  const std::string msg = fmt::format("cannot be captured into a Vulkan plan: it needs {}", what);
  if (rejected_.empty()) rejected_ = msg;
  throw CaptureError(msg);
}

std::shared_ptr<Allocation> Plan::f16_copy(const std::shared_ptr<Allocation>& weights) {
  // Without timeline semaphores Ember cannot run the conversion before the first replay: the plan reads f32.
  if (!capturing_ || !weights || !ctx_->float16_storage() || !ctx_->timeline_semaphores()) return nullptr;
  if (auto it = f16_copies_.find(weights.get()); it != f16_copies_.end()) return it->second.half;
  // A weight is read by the capture without having been written by it: not a per-frame input, not a result of an
  // earlier captured command (end() checks that no later command writes it either).
  for (const Binding& in : inputs_)
    if (in.storage == weights) return nullptr;
  for (const Command& c : commands_)
    for (const Arg& a : c.args)
      if (a.write && a.alloc == weights) return nullptr;
  const VkDeviceSize n = weights->size() / sizeof(float);
  if (n == 0 || n > static_cast<VkDeviceSize>(kMaxShaderElements)) return nullptr;
  auto half = ctx_->allocator().allocate(std::max<VkDeviceSize>(4, (2 * n + 3) / 4 * 4), MemoryUse::Tensor);
  // The conversion runs once, on Ember's own stream (the capture paused for it); end() waits for it.
  std::lock_guard lock(ctx_->mutex());
  ctx_->stream().set_capture(nullptr);
  try {
    const uint32_t count = static_cast<uint32_t>(n);
    launch(*ctx_, kToF16, {{weights, false}, {half, true}}, count, n);
  } catch (...) {
    ctx_->stream().set_capture(this);
    throw;
  }
  ctx_->stream().set_capture(this);
  f16_copies_.emplace(weights.get(), F16Copy{weights, half});
  return half;
}

VkDeviceSize Plan::f16_weight_bytes() const {
  VkDeviceSize bytes = 0;
  for (const auto& [key, copy] : f16_copies_) bytes += copy.half->size();
  return bytes;
}

std::shared_ptr<Allocation> Plan::host_words(const void* data, uint32_t bytes) {
  if (!capturing_ || bytes == 0) return nullptr;
  auto block = ctx_->allocator().allocate(bytes, MemoryUse::Staging);
  // Coherent memory: a host write before vkQueueSubmit is visible to the submitted work without a flush.
  if (!block->mapped() || !block->coherent()) return nullptr;
  std::memcpy(block->mapped(), data, bytes);
  host_words_.push_back(block);
  return block;
}

void Plan::write_host_words(std::size_t i, const void* data, uint32_t bytes) {
  if (i >= host_words_.size() || bytes > host_words_[i]->size())
    throw IndexError(fmt::format("vulkan plan: host block {} ({} bytes) out of range (the plan has {})", i, bytes,
                                 host_words_.size()));
  std::memcpy(host_words_[i]->mapped(), data, bytes);
}

void Plan::defer_check(DeferredCheck check) {
  check_capturing("a deferred check");
  checks_.push_back(std::move(check));
}

Plan::Arg Plan::arg_of(const BufferArg& a) {
  return {a.alloc, a.alloc->buffer(), a.alloc->offset(), a.alloc->size(), a.write};
}

void Plan::dispatch(VkPipeline pipeline, std::span<const BufferArg> args, const void* push, uint32_t push_bytes,
                    uint32_t gx, uint32_t gy, uint32_t gz) {
  Command c{Kind::Dispatch};
  c.pipeline = pipeline;
  c.push_bytes = push_bytes;
  if (push_bytes) std::memcpy(c.push.data(), push, push_bytes);
  c.groups = {gx, gy, gz};
  for (const auto& a : args) c.args.push_back(arg_of(a));
  commands_.push_back(std::move(c));
  ++dispatch_count_;
}

void Plan::copy(const std::shared_ptr<Allocation>& src, VkDeviceSize src_offset,
                const std::shared_ptr<Allocation>& dst, VkDeviceSize dst_offset, VkDeviceSize bytes) {
  Command c{Kind::Copy};
  c.args = {arg_of({src, false}), arg_of({dst, true})};
  c.src_offset = src_offset;
  c.dst_offset = dst_offset;
  c.bytes = bytes;
  commands_.push_back(std::move(c));
}

void Plan::end(const std::vector<std::pair<std::shared_ptr<Allocation>, VkDeviceSize>>& outputs) {
  check_capturing("ending the capture");
  abort();
  if (!rejected_.empty())
    throw CaptureError(fmt::format("vulkan plan: an op of the capture {} (the plan was not built)", rejected_));
  if (outputs.empty()) throw ArgumentError("vulkan plan: no outputs (a plan needs at least one)");
  for (const auto& [storage, bytes] : outputs) {
    if (storage->owner() != &ctx_->allocator())
      throw ArgumentError("vulkan plan: an output lives on another device than the plan");
    outputs_.push_back({storage, bytes});
  }
  if (!f16_copies_.empty()) {
    // An f16 copy holds its weight's values from before the capture: no captured command may change them.
    for (const Command& c : commands_)
      for (const Arg& a : c.args)
        if (a.write && f16_copies_.count(a.alloc.get()))
          throw ArgumentError("vulkan plan: the capture writes a buffer its GEMMs read as an f16 weight copy (f16 "
                              "storage); build this plan without f16 storage");
    std::lock_guard lock(ctx_->mutex());
    ctx_->stream().finish();  // the conversions ran before the first replay (a build-time wait, as begin()'s)
  }
  share_intermediates();
  insert_barriers();
  for (auto& c : commands_)
    if (c.kind == Kind::Copy)
      c.region = {c.args[0].offset + c.src_offset, c.args[1].offset + c.dst_offset, c.bytes};
  write_descriptors();
  built_ = true;
  record_secondary();
}

// The captured commands, recorded once. This is also the plan's warm-up: the first frame's record() then runs
// through code (Ember's and the driver's command entry points) that has run before.
void Plan::record_secondary() {
  const auto& fn = ctx_->fn();
  VkDevice dev = ctx_->device();
  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.queueFamilyIndex = ctx_->queue_family();
  if (fn.CreateCommandPool(dev, &pi, nullptr, &secondary_pool_) != VK_SUCCESS) {
    secondary_pool_ = VK_NULL_HANDLE;
    return;
  }
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = secondary_pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkResult r = fn.AllocateCommandBuffers(dev, &ai, &cb);
  if (r == VK_SUCCESS) {
    const VkCommandBufferInheritanceInfo inherit{VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};  // no pass
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;  // Ember may submit again before a replay executed
    bi.pInheritanceInfo = &inherit;
    r = fn.BeginCommandBuffer(cb, &bi);
    if (r == VK_SUCCESS) {
      record_commands(cb);
      r = fn.EndCommandBuffer(cb);
    }
  }
  if (r != VK_SUCCESS) {  // submit() records the commands inline instead
    fn.DestroyCommandPool(dev, secondary_pool_, nullptr);
    secondary_pool_ = VK_NULL_HANDLE;
    return;
  }
  secondary_ = cb;
}

void Plan::share_intermediates() {
  // An intermediate: held by nothing but the captured commands (not an input, an output, a parameter, nor kept by
  // anyone else) and first used as a command's output. Tensor storage is never written after the op that made it
  // returns, so such a buffer holds nothing from before the capture: its contents are what the commands write.
  struct Use {
    std::size_t refs = 0, first = 0, last = 0;
    bool first_write = false;
  };
  std::map<const Allocation*, Use> uses;
  for (std::size_t i = 0; i < commands_.size(); ++i)
    for (const auto& a : commands_[i].args) {
      auto [it, fresh] = uses.try_emplace(a.alloc.get());
      Use& u = it->second;
      if (fresh) {
        u.first = i;
        u.first_write = a.write;
      }
      u.last = i;
      ++u.refs;
    }
  std::vector<const Allocation*> shared;
  std::vector<Lifetime> lifetimes;
  for (const auto& [alloc, u] : uses) {
    // use_count: the commands' references plus one (the look-up below goes through a command's shared_ptr).
    const Arg* any = nullptr;
    for (const auto& a : commands_[u.first].args)
      if (a.alloc.get() == alloc) any = &a;
    if (!u.first_write || any->alloc.use_count() != static_cast<long>(u.refs)) continue;
    shared.push_back(alloc);
    lifetimes.push_back({alloc->size(), u.first, u.last});
    intermediate_bytes_ += alloc->size();
  }
  if (shared.size() < 2) return;
  const VkDeviceSize alignment = std::max<VkDeviceSize>(256, ctx_->info().min_storage_buffer_offset_alignment);
  std::vector<VkDeviceSize> offsets;
  const VkDeviceSize arena = place_in_arena(lifetimes, alignment, offsets);
  if (arena >= intermediate_bytes_ || arena > ctx_->info().max_storage_buffer_range) return;  // nothing to gain
  arena_ = ctx_->allocator().allocate(arena, MemoryUse::Tensor);
  std::map<const Allocation*, VkDeviceSize> moved;
  for (std::size_t i = 0; i < shared.size(); ++i) moved.emplace(shared[i], offsets[i]);
  for (auto& c : commands_)
    for (auto& a : c.args)
      if (auto it = moved.find(a.alloc.get()); it != moved.end()) {
        a.buffer = arena_->buffer();
        a.offset = arena_->offset() + it->second;
        a.alloc = arena_;  // the intermediate's own allocation goes back to Ember once the last command lets go
      }
}

void Plan::insert_barriers() {
  struct Range {
    VkBuffer buffer;
    VkDeviceSize begin, end;
  };
  std::vector<Range> writes, reads;
  auto overlaps = [](const std::vector<Range>& list, const Range& r) {
    for (const auto& x : list)
      if (x.buffer == r.buffer && x.begin < r.end && r.begin < x.end) return true;
    return false;
  };
  std::vector<Command> out;
  out.reserve(commands_.size() * 2);
  for (auto& c : commands_) {
    bool hazard = false;
    for (const auto& a : c.args) {
      const Range r{a.buffer, a.offset, a.offset + a.size};
      if (overlaps(writes, r) || (a.write && overlaps(reads, r))) hazard = true;
    }
    if (hazard) {
      out.push_back(Command{Kind::Barrier});
      ++barrier_count_;
      writes.clear();
      reads.clear();
    }
    for (const auto& a : c.args) (a.write ? writes : reads).push_back({a.buffer, a.offset, a.offset + a.size});
    out.push_back(std::move(c));
  }
  commands_ = std::move(out);
}

void Plan::write_descriptors() {
  if (dispatch_count_ == 0) return;
  const auto& fn = ctx_->fn();
  VkDevice dev = ctx_->device();
  const auto sets = static_cast<uint32_t>(dispatch_count_);
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, sets * Pipelines::kBindings};
  VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pi.maxSets = sets;
  pi.poolSizeCount = 1;
  pi.pPoolSizes = &size;
  check(fn.CreateDescriptorPool(dev, &pi, nullptr, &pool_), "vkCreateDescriptorPool");
  std::vector<VkDescriptorSetLayout> layouts(sets, ctx_->pipelines().set_layout());
  std::vector<VkDescriptorSet> handles(sets);
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = pool_;
  ai.descriptorSetCount = sets;
  ai.pSetLayouts = layouts.data();
  check(fn.AllocateDescriptorSets(dev, &ai, handles.data()), "vkAllocateDescriptorSets");
  std::vector<VkDescriptorBufferInfo> infos(std::size_t{sets} * Pipelines::kBindings);
  std::vector<VkWriteDescriptorSet> writes(infos.size(), VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET});
  std::size_t k = 0, w = 0;
  for (auto& c : commands_) {
    if (c.kind != Kind::Dispatch) continue;
    c.set = handles[k++];
    for (uint32_t i = 0; i < Pipelines::kBindings; ++i, ++w) {
      infos[w] = i < c.args.size() ? VkDescriptorBufferInfo{c.args[i].buffer, c.args[i].offset, c.args[i].size}
                                   : VkDescriptorBufferInfo{dummy_->buffer(), dummy_->offset(), dummy_->size()};
      writes[w].dstSet = c.set;
      writes[w].dstBinding = i;
      writes[w].descriptorCount = 1;
      writes[w].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[w].pBufferInfo = &infos[w];
    }
  }
  fn.UpdateDescriptorSets(dev, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
}

void Plan::bind_input(std::size_t i, VkBuffer buffer, VkDeviceSize offset) {
  if (i >= inputs_.size())
    throw IndexError(fmt::format("vulkan plan: input {} out of range (the plan has {})", i, inputs_.size()));
  inputs_[i].host = buffer;
  inputs_[i].offset = offset;
}

void Plan::bind_output(std::size_t i, VkBuffer buffer, VkDeviceSize offset) {
  if (i >= outputs_.size())
    throw IndexError(fmt::format("vulkan plan: output {} out of range (the plan has {})", i, outputs_.size()));
  outputs_[i].host = buffer;
  outputs_[i].offset = offset;
}

void Plan::record(VkCommandBuffer cb) const {
  std::lock_guard lock(ctx_->mutex());  // the stream's record-mode state, and poll_errors' view of the replay
  record_replay(cb);
  const auto frame = ctx_->stream().recording_frame();
  last_replay_ = frame ? Replay::Frame : Replay::Host;
  last_tag_ = frame.value_or(0);
}

void Plan::record_replay(VkCommandBuffer cb, bool secondary) const {
  if (!built_) throw ArgumentError("vulkan plan: not built (its capture has not ended successfully)");
  for (std::size_t i = 0; i < inputs_.size(); ++i)
    if (!inputs_[i].host) throw ArgumentError(fmt::format("vulkan plan: input {} is not bound", i));
  for (std::size_t i = 0; i < outputs_.size(); ++i)
    if (!outputs_[i].host) throw ArgumentError(fmt::format("vulkan plan: output {} is not bound", i));
  const auto& fn = ctx_->fn();
  // Whatever the host wrote before (its inputs), and the previous frame's use of the plan's storage (a queue
  // keeps executing earlier frames), happen before this frame's copies and dispatches.
  barrier(fn, cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT, kWork, kWorkAccess);
  for (const auto& in : inputs_) {
    if (in.bytes == 0) continue;
    const VkBufferCopy region{in.offset, in.storage->offset(), in.bytes};
    fn.CmdCopyBuffer(cb, in.host, in.storage->buffer(), 1, &region);
  }
  // This replay's error words start clear (the leading barrier ordered them after the previous replay's use).
  for (const auto& c : checks_) fn.CmdFillBuffer(cb, c.flag->buffer(), c.flag->offset(), kErrorWordBytes, 0);
  if (!inputs_.empty() || !checks_.empty()) barrier(fn, cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, kWork, kWorkAccess);
  if (secondary && secondary_) fn.CmdExecuteCommands(cb, 1, &secondary_);
  else record_commands(cb);
  barrier(fn, cb, kWork, kWorkWrites, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
  for (const auto& out : outputs_) {
    if (out.bytes == 0) continue;
    const VkBufferCopy region{out.storage->offset(), out.offset, out.bytes};
    fn.CmdCopyBuffer(cb, out.storage->buffer(), out.host, 1, &region);
  }
  // The outputs are visible to whatever the host records next (its own pass reading them, a copy, a host read
  // after its fence), at any stage.
  barrier(fn, cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
          VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
  // The checks' verdicts (written by shaders or copies) are visible to poll_errors' host read once the frame
  // completed.
  if (!checks_.empty()) barrier(fn, cb, kWork, kWorkWrites, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
}

void Plan::record_commands(VkCommandBuffer cb) const {
  const auto& fn = ctx_->fn();
  VkPipeline bound = VK_NULL_HANDLE;
  const VkPipelineLayout layout = ctx_->pipelines().layout();
  for (const auto& c : commands_) {
    switch (c.kind) {
      case Kind::Barrier: barrier(fn, cb, kWork, kWorkWrites, kWork, kWorkAccess); break;
      case Kind::Copy: fn.CmdCopyBuffer(cb, c.args[0].buffer, c.args[1].buffer, 1, &c.region); break;
      case Kind::Dispatch:
        if (c.pipeline != bound) fn.CmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, bound = c.pipeline);
        fn.CmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &c.set, 0, nullptr);
        if (c.push_bytes)
          fn.CmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, c.push_bytes, c.push.data());
        fn.CmdDispatch(cb, c.groups[0], c.groups[1], c.groups[2]);
        break;
    }
  }
}

uint64_t Plan::submit(const std::vector<std::shared_ptr<void>>& keep) {
  std::lock_guard lock(ctx_->mutex());
  Stream& s = ctx_->stream();
  if (s.capture()) throw ArgumentError("vulkan plan: cannot submit a plan while the device captures one");
  // What flush() would refuse, refused before recording: a replay left in a batch that is never submitted would
  // keep the plan (retained below), and through it the context, alive for good.
  if (!ctx_->timeline_semaphores()) throw DeviceError(kNoTimelineMessage);
  s.refuse_in_record_mode("ember_vulkan_plan_submit (record the plan into the frame instead)");
  s.record({}, [&](VkCommandBuffer cb) { record_replay(cb, true); });
  s.retain(shared_from_this());  // the batch keeps the plan (its descriptor sets, its storage) until executed
  for (const auto& k : keep) s.retain(k);
  const uint64_t value = s.flush();
  last_replay_ = Replay::Timeline;
  last_tag_ = value;
  return value;
}

void Plan::poll_errors() const {
  std::lock_guard lock(ctx_->mutex());
  ctx_->ensure_alive();  // no semaphore query on a lost device
  if (checks_.empty() || last_replay_ == Replay::None) return;
  std::string where;
  switch (last_replay_) {
    case Replay::None: return;
    case Replay::Frame: {
      const auto safe = ctx_->stream().safe_frame_index();
      if (!safe || *safe < last_tag_) return;  // the frame may still run: its words are not this replay's yet
      where = fmt::format("plan replay recorded in frame {}", last_tag_);
      break;
    }
    case Replay::Timeline: {
      if (!ctx_->stream().completed(last_tag_)) return;  // (asks the fence too: the counter may lag behind it)
      where = fmt::format("plan replay submitted as timeline value {}", last_tag_);
      break;
    }
    case Replay::Host: where = "the plan's last replay"; break;
  }
  for (const auto& c : checks_) throw_if_failed(*ctx_, c, where);
}

}  // namespace ember::vk
