#pragma once
// Plans (issue 17): a forward pass captured once and replayed every frame into a command buffer the caller owns
// (a game engine's frame), in microseconds.
//
//  * Capture: while a plan captures, the context's Stream hands every dispatch and copy to the plan (commands.hpp,
//    CaptureSink) instead of recording it. The plan keeps the pipeline, the push constants, the group counts and
//    the buffers; when the capture ends it inserts the barriers the Stream's hazard tracking would (a global
//    barrier before a command that touches a range an earlier command wrote, or writes one it read). Anything needing the GPU to finish
//    (a read back, a submit) or recording commands of its own (VkFFT) throws CaptureError:
//    such an op cannot be replayed without a CPU round trip, so the plan is refused when it is built.
//  * Memory: every buffer the commands touch (inputs, outputs, parameters) is held by the plan, so its storage is
//    fixed for the plan's life. Intermediates (buffers only the captured commands use, first written by one of
//    them) move into one arena the plan owns, where buffers whose lifetimes do not overlap share memory
//    (plan_memory.hpp); the barriers are placed after that, so reuse is ordered like any other hazard.
//  * Descriptors: one set per dispatch, allocated and written when the capture ends, never updated afterwards
//    (a set may not change while a command buffer using it is pending, and a host keeps frames in flight).
//  * Inputs and outputs: the caller binds its buffers per frame (bind_input / bind_output); record() copies the
//    bound inputs into the plan's input storage and the outputs out to the bound buffers. Copies rather than
//    descriptor updates: the sets stay immutable while earlier frames execute, and a copy of a network's
//    input/output is a few hundred bytes.
//  * Replay: record() appends a leading barrier (the host's earlier writes, and the previous frame's use of the
//    plan's storage), the input copies, the captured commands, the output copies and a trailing barrier that makes
//    the outputs visible to any later command of the host's. Nothing is allocated or written on the host.
//    submit() (Ember's own queue) executes the captured commands from a secondary command buffer recorded once when
//    the plan is built, so a replay records a dozen commands rather than every dispatch again (a compiled training
//    step replays one per call: engine/compile/README.md).
//  * Checks: index-range and integer-division checks are deferred while capturing (checks_deferred, check_sink.hpp): the
//    plan owns their error words (host-visible), record() resets them with vkCmdFillBuffer before the captured
//    commands and makes the checks' writes visible to the host after them; poll_errors() reads them once the last
//    replay is known to have completed. Bad indices are clamped before use, so a bad frame never reads outside a
//    buffer; its outputs are unspecified and the poll names the op.
// The caller keeps a plan alive until every command buffer it was recorded into has executed.
#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/vulkan/check_sink.hpp"
#include "backends/vulkan/commands.hpp"
#include "backends/vulkan/context.hpp"
#include "backends/vulkan/memory.hpp"
#include "backends/vulkan/pipelines.hpp"

namespace ember::vk {

class Plan final : public CaptureSink, public CheckSink, public std::enable_shared_from_this<Plan> {
 public:
  explicit Plan(std::shared_ptr<Context> ctx);
  ~Plan() override;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  // Starts capturing the context's commands. Waits for Ember's earlier work first (a load-time call), so the
  // captured commands depend on nothing still pending. Other threads must not use the device until end().
  void begin();
  // Throws VulkanError (EMBER_ERR_UNSUPPORTED) while ctx is in host-record mode: a build waits for Ember's earlier
  // work and a warm-up for its forward, and Ember never waits there. Plans are built during loading.
  static void refuse_in_record_mode(Context& ctx);
  // Storage for the next input (bytes of it); each frame's bound input is copied into it.
  std::shared_ptr<Allocation> add_input(VkDeviceSize bytes);
  // Stops capturing and builds the plan with these outputs (storage, bytes from its start); CaptureError when an
  // op of the capture was rejected.
  void end(const std::vector<std::pair<std::shared_ptr<Allocation>, VkDeviceSize>>& outputs);
  // Stops capturing without building (an error during the forward); safe to call when not capturing.
  void abort() noexcept;
  bool capturing() const { return capturing_; }
  bool built() const { return built_; }

  std::size_t inputs() const { return inputs_.size(); }
  std::size_t outputs() const { return outputs_.size(); }
  // The host's buffer for input / output i this frame (VK_BUFFER_USAGE_TRANSFER_SRC_BIT / _DST_BIT).
  void bind_input(std::size_t i, VkBuffer buffer, VkDeviceSize offset);
  void bind_output(std::size_t i, VkBuffer buffer, VkDeviceSize offset);
  // Appends the plan to cb (recording, outside a render pass, on a queue family with compute).
  void record(VkCommandBuffer cb) const;
  // Records the plan on Ember's own stream and submits it; returns the timeline value that signals completion.
  // `keep`: what the batch must hold until it executed besides the plan (a bound input the caller may drop).
  uint64_t submit(const std::vector<std::shared_ptr<void>>& keep = {});
  // Throws the first failed check of the plan's last replay (IndexError / ArgumentError, the op's message) once
  // that replay has completed: for submit(), when Ember's timeline reached its value; for a record() between
  // record_begin and record_end, when the host reported its frame safe; for any other record(), the caller
  // vouches that the command buffer executed. Nothing while the replay may still run, nor before the first one.
  // Never waits.
  void poll_errors() const;
  std::size_t checks() const { return checks_.size(); }

  std::size_t dispatches() const { return dispatch_count_; }
  std::size_t barriers() const { return barrier_count_; }
  // Bytes of the intermediates before and after sharing memory (the arena's size).
  VkDeviceSize intermediate_bytes() const { return intermediate_bytes_; }
  VkDeviceSize arena_bytes() const { return arena_ ? arena_->size() : 0; }
  // f16 storage (Context::float16_storage): the weights the plan holds as f16 copies (read by the GEMM's B16
  // variant) and the bytes of those copies (half the f32 weights' bytes, each rounded up to 4).
  std::size_t f16_weights() const { return f16_copies_.size(); }
  VkDeviceSize f16_weight_bytes() const;

  // Per-step scalar blocks (CaptureSink::host_words), in the order the capture asked for them: a compiled training
  // step rewrites block i before each replay (engine/compile/step_plan.hpp). The caller makes sure no replay that
  // reads the block is still executing (a write is seen by the GPU at the next submit).
  std::size_t host_blocks() const { return host_words_.size(); }
  void write_host_words(std::size_t i, const void* data, uint32_t bytes);

  // CaptureSink
  std::shared_ptr<Allocation> host_words(const void* data, uint32_t bytes) override;
  void dispatch(VkPipeline pipeline, std::span<const BufferArg> args, const void* push, uint32_t push_bytes,
                uint32_t gx, uint32_t gy, uint32_t gz) override;
  void copy(const std::shared_ptr<Allocation>& src, VkDeviceSize src_offset, const std::shared_ptr<Allocation>& dst,
            VkDeviceSize dst_offset, VkDeviceSize bytes) override;
  void keep(std::shared_ptr<void> obj) override { kept_.push_back(std::move(obj)); }
  void reject(const char* what) override;
  // A weight's f16 copy, made once (a conversion on Ember's own stream, complete when the plan is built).
  std::shared_ptr<Allocation> f16_copy(const std::shared_ptr<Allocation>& weights) override;
  // CheckSink
  void defer_check(DeferredCheck check) override;

 private:
  enum class Kind : uint8_t { Dispatch, Copy, Barrier };
  // A buffer a command uses: the allocation while capturing; the range it is bound as once the plan is built
  // (an intermediate's range is in the arena, and its allocation is then released).
  struct Arg {
    std::shared_ptr<Allocation> alloc;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize offset = 0, size = 0;
    bool write = false;
  };
  struct Command {
    Kind kind = Kind::Dispatch;
    VkPipeline pipeline = VK_NULL_HANDLE;
    VkDescriptorSet set = VK_NULL_HANDLE;
    uint32_t push_bytes = 0;
    std::array<uint32_t, 3> groups{};
    std::array<uint8_t, Pipelines::kPushBytes> push{};
    std::vector<Arg> args;  // dispatch: bindings 0..n-1; copy: src, dst
    VkDeviceSize src_offset = 0, dst_offset = 0, bytes = 0;  // copy, relative to its args
    VkBufferCopy region{};  // copy, once built
  };
  struct Binding {
    std::shared_ptr<Allocation> storage;  // the plan's own
    VkDeviceSize bytes = 0;               // copied per frame (0: nothing)
    VkBuffer host = VK_NULL_HANDLE;       // bound for this frame
    VkDeviceSize offset = 0;
  };
  static Arg arg_of(const BufferArg& a);
  void share_intermediates();
  void insert_barriers();
  void write_descriptors();
  // The captured commands (barriers, copies, dispatches) into cb.
  void record_commands(VkCommandBuffer cb) const;
  void check_capturing(const char* what) const;
  // record() without noting the replay (submit() notes its timeline value); `secondary`: the captured commands
  // from secondary_ (a primary command buffer of Ember's) rather than recorded again.
  void record_replay(VkCommandBuffer cb, bool secondary = false) const;
  // Records the captured commands once into secondary_ (left null where that fails: submit() records them inline);
  // also the warm-up of the first frame's record() (the same command entry points have run).
  void record_secondary();
  // The last replay, for poll_errors: where it went and its frame index / timeline value.
  enum class Replay : uint8_t { None, Frame, Timeline, Host };

  std::shared_ptr<Context> ctx_;
  bool capturing_ = false, built_ = false;
  std::string rejected_;  // the first rejected request
  std::vector<Command> commands_;
  std::vector<Binding> inputs_, outputs_;
  std::vector<std::shared_ptr<void>> kept_;
  std::shared_ptr<Allocation> arena_;  // the intermediates' shared memory (null: none)
  VkDeviceSize intermediate_bytes_ = 0;
  std::shared_ptr<Allocation> dummy_;  // bound to a dispatch's unused bindings
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkCommandPool secondary_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer secondary_ = VK_NULL_HANDLE;  // the captured commands, simultaneous use (frames in flight)
  std::size_t dispatch_count_ = 0, barrier_count_ = 0;
  std::vector<DeferredCheck> checks_;  // their flags are the plan's error words
  std::vector<std::shared_ptr<Allocation>> host_words_;  // host-visible, coherent: per-step scalars
  mutable Replay last_replay_ = Replay::None;
  mutable uint64_t last_tag_ = 0;
  // f16 storage: each weight's f16 copy, by the weight's allocation (kept alive, so the key stays unique).
  struct F16Copy {
    std::shared_ptr<Allocation> weights, half;
  };
  std::map<const Allocation*, F16Copy> f16_copies_;
};

}  // namespace ember::vk
