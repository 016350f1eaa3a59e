// VkFFT plans (see fft_plans.hpp). VkFFT generates GLSL for the exact (n, batch, direction) and compiles it with
// glslang when the plan is built; building also uploads twiddle tables and, for lengths VkFFT cannot factor into
// small radices, Bluestein's chirp sequences, through the queue (hence the command pool and fence per context).
//
// Layouts: every plan is a 1-D transform of size[0] = n repeated over size[1] = batch rows (rows are packed
// several per workgroup, which suits the short signals Ember sees better than VkFFT's numberBatches).
//  * Fft / Ifft: in place on one complex region [batch, n, 2].
//  * Rfft: real rows [batch, n] (VkFFT's "input buffer", unpadded: stride n) -> complex [batch, n/2+1, 2].
//  * Irfft: the inverse of that layout, written back to the real region (inverseReturnToInputBuffer).
// The inverse transforms are normalized by VkFFT (normalize = 1: the 1/n of FftOp).
#define VKFFT_BACKEND 0
// Must precede VkFFT: it routes VkFFT's vkXxx(...) calls through the dlopen'ed loader (no libvulkan link).
#include "backends/vulkan/vkfft_loader.hpp"
#include "vkfft_patched.h"  // the system vkFFT.h, patched at build time for glslang 12 (patch_vkfft.py)

#include <map>
#include <string>
#include <tuple>

#include "backends/vulkan/commands.hpp"
#include "backends/vulkan/fft_plans.hpp"

namespace ember::vk {
namespace {

// glslang's process-wide state, set up once and kept for the life of the process (plans say it is initialized).
void initialize_glslang() {
  static const bool ok = glslang_initialize_process() != 0;
  if (!ok) throw VulkanError("vulkan fft: glslang_initialize_process failed");
}

[[noreturn]] void throw_vkfft(VkFFTResult r, const char* what, int64_t n, int64_t batch) {
  throw VulkanError(std::string("vulkan fft: VkFFT ") + what + " failed with VkFFTResult " +
                    std::to_string(static_cast<int>(r)) + " (n = " + std::to_string(n) +
                    ", batch = " + std::to_string(batch) + ")");
}

// VkFFT sizes buffers in whole complex values (8 bytes), rounding up: round the scratch up so that its descriptor
// range never runs past the allocation.
VkDeviceSize complex_rounded(VkDeviceSize bytes) { return (bytes + 7) / 8 * 8; }

class VkfftPlan final : public FftPlan {
 public:
  VkfftPlan(Context& ctx, FftOp op, int64_t n, int64_t batch, VkCommandPool pool, VkFence fence)
      : device_(ctx.device()),
        physical_(ctx.physical_device()),
        pool_(pool),
        fence_(fence),
        real_op_(op == FftOp::Rfft || op == FftOp::Irfft),
        inverse_(op == FftOp::Ifft || op == FftOp::Irfft),
        n_(n),
        batch_(batch) {
    const bool real = real_op_, inverse = inverse_;
    // One allocation holds the complex region and (real transforms) the real one after it: VkFFT describes every
    // buffer from its start up to its configured size, so both regions sharing one range keeps each descriptor
    // inside the allocation's block whichever region a dispatch writes.
    const auto rows = static_cast<VkDeviceSize>(batch);
    const VkDeviceSize complex_bytes = complex_rounded(rows * static_cast<VkDeviceSize>(real ? n / 2 + 1 : n) * 8);
    const VkDeviceSize real_bytes = real ? complex_rounded(rows * static_cast<VkDeviceSize>(n) * 4) : 0;
    scratch_ = ctx.allocator().allocate(complex_bytes + real_bytes, MemoryUse::Tensor);
    const VkDeviceSize complex_offset = scratch_->offset(), real_offset = scratch_->offset() + complex_bytes;
    complex_region_ = 0;
    real_region_ = complex_bytes;

    VkFFTConfiguration c{};
    c.FFTdim = 1;
    c.size[0] = static_cast<uint64_t>(n);
    c.size[1] = static_cast<uint64_t>(batch);
    c.physicalDevice = &physical_;
    c.device = &device_;
    c.queue = &queue_;
    c.commandPool = &pool_;
    c.fence = &fence_;
    c.isCompilerInitialized = 1;
    // Twiddles from tables computed in double on the host instead of sin/cos in f32 shaders: the f32 intrinsics
    // of some drivers are too coarse for the 1e-5 agreement the ops promise.
    c.useLUT = 1;
    c.normalize = inverse ? 1 : 0;
    c.makeForwardPlanOnly = inverse ? 0 : 1;
    c.makeInversePlanOnly = inverse ? 1 : 0;
    // Descriptors cover the block buffer from its start; the regions' places in it are compile-time offsets.
    // Buffers are only handed over at the first record() (see there).
    buffer_ = scratch_->buffer();
    buffer_size_ = scratch_->offset() + scratch_->size();
    c.bufferSize = &buffer_size_;
    c.bufferOffset = complex_offset;
    if (real) {
      c.performR2C = 1;
      c.isInputFormatted = 1;  // the real rows are packed (stride n), not padded to 2 * (n/2 + 1)
      c.inputBufferStride[0] = static_cast<uint64_t>(n);
      c.inputBufferStride[1] = static_cast<uint64_t>(n) * rows;
      c.inputBufferStride[2] = c.inputBufferStride[1];
      c.inputBufferSize = &buffer_size_;
      c.inputBufferOffset = real_offset;
      if (inverse) {
        c.inverseReturnToInputBuffer = 1;
        // VkFFT's C2R otherwise transforms two rows as one complex sequence (X_a + i X_b), which turns the
        // imaginary parts of bin 0 and bin n/2 of row a into a constant / alternating error in row b; FftOp says
        // those parts are ignored. Row by row, C2R drops them.
        c.disableMergeSequencesR2C = 1;
      }
    }
    launch_.bufferOffset = c.bufferOffset;
    launch_.inputBufferOffset = c.inputBufferOffset;

    initialize_glslang();
    VkFFTResult r = VKFFT_SUCCESS;
    // Plan creation submits uploads (twiddle tables, Bluestein sequences) and waits for them on its own fence.
    ctx.stream().refuse_in_record_mode("creating an FFT plan (it submits its tables and waits)");
    ctx.with_queue([&](VkQueue q) {
      queue_ = q;
      r = initializeVkFFT(&app_, c);
    });
    if (r != VKFFT_SUCCESS) throw_vkfft(r, "plan creation", n, batch);  // initializeVkFFT cleaned up after itself
    initialized_ = true;
  }

  ~VkfftPlan() override {
    if (initialized_) deleteVkFFT(&app_);
  }

  const std::shared_ptr<Allocation>& scratch() const override { return scratch_; }
  VkDeviceSize input_offset() const override {
    return real_op_ && !inverse_ ? real_region_ : complex_region_;
  }
  VkDeviceSize output_offset() const override {
    return real_op_ && inverse_ ? real_region_ : complex_region_;
  }

  void record(VkCommandBuffer cb) override {
    // VkFFT writes a plan's descriptor sets when the buffer pointers it is given differ from the ones it saw
    // last. The plan was built without buffers, so the first record() writes them all (including the Bluestein
    // bindings, which only exist once initialization has uploaded the chirp sequences); later calls pass the
    // same pointers and leave the sets alone, as the command buffers that already use them require.
    launch_.commandBuffer = &cb;
    launch_.buffer = &buffer_;
    if (real_op_) launch_.inputBuffer = &buffer_;
    const VkFFTResult r = VkFFTAppend(&app_, inverse_ ? 1 : -1, &launch_);
    launch_.commandBuffer = nullptr;
    if (r != VKFFT_SUCCESS) throw_vkfft(r, "append", n_, batch_);
  }

 private:
  // VkFFT keeps pointers to these for the plan's lifetime.
  VkDevice device_;
  VkPhysicalDevice physical_;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_;
  VkFence fence_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  uint64_t buffer_size_ = 0;

  const bool real_op_, inverse_;
  const int64_t n_, batch_;
  std::shared_ptr<Allocation> scratch_;
  VkDeviceSize complex_region_ = 0, real_region_ = 0;  // offsets in scratch_
  VkFFTApplication app_{};
  VkFFTLaunchParams launch_{};
  bool initialized_ = false;
};

// The plans of one context, plus the command pool and fence VkFFT needs to upload tables while building them.
// Plans in use by pending commands stay alive through the stream's references when evicted or destroyed here.
class PlanCache final : public Context::Extension {
 public:
  explicit PlanCache(Context& ctx) : ctx_(ctx) {
    const auto& fn = ctx.fn();
    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    pi.queueFamilyIndex = ctx.queue_family();
    check(fn.CreateCommandPool(ctx.device(), &pi, nullptr, &pool_), "vkCreateCommandPool(fft)");
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (VkResult r = fn.CreateFence(ctx.device(), &fi, nullptr, &fence_); r != VK_SUCCESS) {
      fn.DestroyCommandPool(ctx.device(), pool_, nullptr);
      throw_result(r, "vkCreateFence(fft)");
    }
  }
  ~PlanCache() override {
    plans_.clear();
    ctx_.fn().DestroyFence(ctx_.device(), fence_, nullptr);
    ctx_.fn().DestroyCommandPool(ctx_.device(), pool_, nullptr);
  }

  std::shared_ptr<FftPlan> get(FftOp op, int64_t n, int64_t batch) {
    const Key key{static_cast<int>(op), n, batch};
    if (auto it = plans_.find(key); it != plans_.end()) return it->second;
    // Each plan holds compiled pipelines and scratch as large as its signals: bound their number.
    if (plans_.size() >= kMaxPlans) plans_.clear();
    auto plan = std::make_shared<VkfftPlan>(ctx_, op, n, batch, pool_, fence_);
    plans_.emplace(key, plan);
    return plan;
  }

 private:
  using Key = std::tuple<int, int64_t, int64_t>;
  static constexpr std::size_t kMaxPlans = 64;
  Context& ctx_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  std::map<Key, std::shared_ptr<FftPlan>> plans_;
};

}  // namespace

std::shared_ptr<FftPlan> fft_plan(Context& ctx, FftOp op, int64_t n, int64_t batch) {
  ctx.ensure_alive();  // building a plan submits through VkFFT's own entry points: not on a lost device
  auto& cache = static_cast<PlanCache&>(
      ctx.extension("vkfft_plans", [&] { return std::make_unique<PlanCache>(ctx); }));
  return cache.get(op, n, batch);
}

}  // namespace ember::vk
