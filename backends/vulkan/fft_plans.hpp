#pragma once
// VkFFT plans for the FFT ops (fft.cpp): one per (kind, n, batch) and context, built on first use and cached.
//
// A VkFFT application owns descriptor sets that name its buffers. Updating a descriptor set that a recorded (or
// still executing) command buffer uses invalidates that command buffer, so a plan must never be pointed at new
// buffers once it has been recorded. Each plan therefore owns scratch buffers of its own: an op copies its input
// into the plan's scratch, records the plan, and copies the result out of the scratch. The command stream orders those
// copies against the transform (and against the plan's previous use) like any other command.
#include <cstdint>
#include <memory>

#include "backends/vulkan/context.hpp"
#include "backends/vulkan/memory.hpp"
#include "engine/backend/ops.hpp"

namespace ember::vk {

class FftPlan {
 public:
  virtual ~FftPlan() = default;
  // The plan's scratch, with the transform's input and output regions in it (the same region for in-place
  // complex transforms). Input: [batch, n, 2] complex, [batch, n] real (Rfft) or [batch, n/2+1, 2] (Irfft);
  // output: laid out as the op's result.
  virtual const std::shared_ptr<Allocation>& scratch() const = 0;
  virtual VkDeviceSize input_offset() const = 0;
  virtual VkDeviceSize output_offset() const = 0;
  // Appends the transform's dispatches (and VkFFT's own barriers between them) to cb.
  virtual void record(VkCommandBuffer cb) = 0;
};

// The cached plan of ctx for `op` over `batch` signals of length n (call with ctx.mutex() held; keep the plan
// alive with ctx.stream().retain() while commands that use it are pending).
std::shared_ptr<FftPlan> fft_plan(Context& ctx, FftOp op, int64_t n, int64_t batch);

}  // namespace ember::vk
