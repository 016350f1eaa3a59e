#pragma once
// The command stream of a context: Ember records dispatches and copies into a command buffer and submits it every
// `dispatches_per_submit` dispatches (so the GPU executes a long graph while Ember keeps recording), or when the
// host needs data. Barriers are inserted only where a command touches a buffer range that an earlier, not yet
// barriered command wrote (or writes one that an earlier command read). Every batch keeps the allocations it
// uses alive until its fence signals, and signals a timeline semaphore the host can wait on (interop).
//
// Flush policy: with dispatches_per_submit == 0 Ember never submits by itself (the caller's ember_vulkan_submit
// does); batches then grow without bound (descriptor pools are added as needed) and no op ever waits on a fence.
// Host-record mode (record_begin .. record_end): commands go into the host's command buffer instead, which the
// host submits; any flush, submit or wait in that mode is an error. What a recorded frame uses (allocations,
// descriptor pools, staging) is kept until the host reports the frame safe (safe_frame: its GPU work completed).
// Deferred checks (index ranges, integer division by zero) write a device-side flag instead of reading it back
// when the stream must not block (record mode, or dispatches_per_submit == 0); poll_errors() reads the flags of
// completed work.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backends/vulkan/memory.hpp"

namespace ember::vk {

class Context;

struct BufferArg {
  std::shared_ptr<Allocation> alloc;
  bool write = false;
};

// Where commands go while a plan captures them (plan.hpp): instead of being recorded and submitted, dispatches and
// copies are handed to the sink; anything that would need the GPU to finish (a flush, a wait, a read back) or that
// records commands Ember cannot replay goes to reject(), which throws CaptureError naming it.
class CaptureSink {
 public:
  virtual ~CaptureSink() = default;
  virtual void dispatch(VkPipeline pipeline, std::span<const BufferArg> args, const void* push, uint32_t push_bytes,
                        uint32_t gx, uint32_t gy, uint32_t gz) = 0;
  virtual void copy(const std::shared_ptr<Allocation>& src, VkDeviceSize src_offset,
                    const std::shared_ptr<Allocation>& dst, VkDeviceSize dst_offset, VkDeviceSize bytes) = 0;
  // Objects the captured commands need alive (Stream::retain).
  virtual void keep(std::shared_ptr<void> obj) = 0;
  // Throws CaptureError (callers return after it only to satisfy the compiler).
  virtual void reject(const char* what) = 0;
  // A host-visible buffer holding `bytes` of `data` that the sink's owner may rewrite between replays: a kernel
  // reads per-step scalars from it instead of push constants (the fused Adam update's lr and bias corrections);
  // null when the sink keeps none.
  virtual std::shared_ptr<Allocation> host_words(const void* data, uint32_t bytes) {
    (void)data;
    (void)bytes;
    return nullptr;
  }
  // f16 storage (Context::float16_storage): an f16 copy of `weights`, a buffer the capture reads but never wrote
  // (a parameter), for a GEMM to read as its B operand (element i at index i); null when the sink keeps no such
  // copies or `weights` is not a parameter. The copy holds the values of when it was made.
  virtual std::shared_ptr<Allocation> f16_copy(const std::shared_ptr<Allocation>& weights) {
    (void)weights;
    return nullptr;
  }
};

struct StreamStats {
  uint64_t dispatches = 0, barriers = 0, submits = 0, waits = 0;
};

// A check whose verdict the device writes (a host-visible int64 pair: [verdict != 0 on failure, bad value]).
enum class CheckKind { IndexRange, DivisionByZero };
struct DeferredCheck {
  std::shared_ptr<Allocation> flag;
  CheckKind kind = CheckKind::IndexRange;
  std::string op;      // the op's user-facing name
  std::size_t dim = 0; // IndexRange: the dim indexed and its size
  int64_t size = 0;
  bool recorded = false;  // in a host-recorded frame (tag: frame index) or in Ember's own batch (tag: timeline value)
  uint64_t tag = 0;
};

// Resources Ember holds for host-recorded frames the host has not reported safe yet.
struct PendingFrames {
  uint64_t frames = 0, resources = 0;
};

class Stream {
 public:
  Stream(Context& ctx, uint32_t dispatches_per_submit);
  ~Stream();

  // Binds args to bindings 0..n-1 (the rest get a dummy buffer) and dispatches groups.
  void dispatch(VkPipeline pipeline, std::span<const BufferArg> args, const void* push, uint32_t push_bytes,
                uint32_t groups_x, uint32_t groups_y = 1, uint32_t groups_z = 1);
  void copy(const std::shared_ptr<Allocation>& src, VkDeviceSize src_offset, const std::shared_ptr<Allocation>& dst,
            VkDeviceSize dst_offset, VkDeviceSize bytes);
  // Records arbitrary commands (VkFFT appends its own dispatches) after the barriers `args` need.
  template <class F>
  void record(std::span<const BufferArg> args, F&& f) {
    if (capture_) return capture_->reject("recording commands of its own (VkFFT's transforms cannot be replayed)");
    VkCommandBuffer cb = begin_command(args);
    f(cb);
    end_command(args);
  }
  // Keeps `obj` alive until the current batch has executed.
  void retain(std::shared_ptr<void> obj);

  // Submits what was recorded; returns the timeline value that signals when it has executed.
  uint64_t flush();
  // flush() and wait until everything submitted has executed.
  void finish();
  // Waits until timeline value `v` has been reached (v from flush()).
  void wait(uint64_t v);
  // The next submit waits for the host's timeline semaphore to reach `value` (interop: inputs written by the host).
  void wait_for(VkSemaphore timeline, uint64_t value);

  // Host-record mode. record_begin appends a barrier making the host's earlier writes (any stage) visible to
  // Ember's compute / transfer work; record_end appends one making Ember's writes visible to every later stage of
  // the host (and to host reads of the check flags once the frame completed). frame_index never decreases.
  void record_begin(VkCommandBuffer cb, uint32_t queue_family, uint64_t frame_index);
  void record_end();
  bool recording() const { return recording_frame_.has_value(); }
  std::optional<uint64_t> recording_frame() const { return recording_frame_; }
  std::optional<uint64_t> safe_frame_index() const { return safe_frame_; }  // the highest the host reported
  // All GPU work of frames <= safe_frame_index has completed: their resources are released.
  void safe_frame(uint64_t safe_frame_index);
  PendingFrames pending_frames() const;
  // Throws (VulkanError: EMBER_ERR_UNSUPPORTED) naming `what` in record mode, where Ember must not submit or wait.
  void refuse_in_record_mode(const char* what) const;

  // Whether checks must be deferred (the stream must not block): in record mode or with no own flush policy.
  bool defers_checks() const { return recording() || per_submit_ == 0; }
  // A zeroed, host-visible flag for a deferred check (staging memory, bindable as a storage buffer).
  std::shared_ptr<Allocation> new_check_flag();
  // Registers a check whose flag the commands recorded so far (in the current batch or frame) write.
  void defer_check(DeferredCheck check);
  // Throws the first failed check among completed work (IndexError / ArgumentError with the CPU's message);
  // checks of completed work are forgotten, those of work still running stay. Never waits.
  void poll_errors();
  // Whether the batch submitted as timeline `value` has executed, asked without waiting: its fence has signalled, or
  // the timeline reached it. (The fence is the reliable one: lavapipe may update the counter a little later, so a
  // batch wait() returned from can still read as running on the counter alone.)
  bool completed(uint64_t value);
  VkSemaphore timeline() const { return timeline_; }
  uint64_t last_submitted() const { return submitted_; }
  const StreamStats& stats() const { return stats_; }
  // Plans (plan.hpp): while a sink is set, commands go to it instead of a command buffer (call with the context's
  // mutex held; nullptr ends the capture).
  void set_capture(CaptureSink* sink) { capture_ = sink; }
  CaptureSink* capture() const { return capture_; }

 private:
  struct Batch {
    VkCommandBuffer cb = VK_NULL_HANDLE;
    std::vector<VkDescriptorPool> pools;  // grown on demand; pools[pool] is being filled
    std::size_t pool = 0;
    uint32_t sets_in_pool = 0;
    VkFence fence = VK_NULL_HANDLE;
    std::vector<std::shared_ptr<void>> keep;
    uint32_t dispatches = 0;
    uint32_t commands = 0;
    uint64_t value = 0;  // timeline value signalled by its submit
    bool recording = false;
    bool host_owned = false;  // the host's command buffer (record mode): never submitted or reset by Ember
  };
  struct Range {
    VkBuffer buffer;
    VkDeviceSize begin, end;
  };
  Batch& current();
  void recycle(bool block);
  VkDescriptorSet allocate_set(Batch& b);
  VkDescriptorPool take_pool();
  void release_pools(Batch& b);
  VkCommandBuffer begin_command(std::span<const BufferArg> args);
  void end_command(std::span<const BufferArg> args);
  bool overlaps(const std::vector<Range>& list, const Range& r) const;

  Context& ctx_;
  uint32_t per_submit_;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkSemaphore timeline_ = VK_NULL_HANDLE;
  uint64_t submitted_ = 0;
  std::deque<Batch> in_flight_;
  std::vector<Batch> idle_;
  std::optional<Batch> open_;
  std::vector<Range> pending_writes_, pending_reads_;
  std::vector<std::pair<VkSemaphore, uint64_t>> host_waits_;
  std::shared_ptr<Allocation> dummy_;
  StreamStats stats_;
  uint32_t sets_per_pool_;
  std::vector<VkDescriptorPool> spare_pools_;  // reset pools of released frames
  std::optional<uint64_t> recording_frame_;
  std::optional<uint64_t> last_frame_, safe_frame_;
  std::deque<Batch> frames_;  // recorded frames awaiting safe_frame (value: frame index)
  std::deque<DeferredCheck> checks_;
  CaptureSink* capture_ = nullptr;
};

}  // namespace ember::vk
