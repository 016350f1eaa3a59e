#pragma once
// ember::vulkan::compile_forward (issue 14): a model's eval forward on a Vulkan device, compiled once into a
// vk::Plan (plan.hpp) and then replayed without running any of Ember's per-op host code.
//
//   auto net = ember::vulkan::compile_forward<2>(dev, {64, 64}, [&](const auto& x) { return model.forward(x); });
//   net.bind_input(0, host_in, 0);            // the host's buffers (TRANSFER_SRC in, TRANSFER_DST out)
//   net.bind_output(0, host_out, 0);
//   net.record(frame_cb);                     // into the host's command buffer: once, then resubmitted each frame
//   uint64_t done = net.submit();             // or: recorded and submitted on Ember's own queue
//
// This is C++'s form of the C ABI's ember_vulkan_plan_create (api_vulkan_plan.cpp) for a typed module: a warm-up
// forward over zeros first (every pipeline is created and lavapipe generates each shader's machine code on its
// first dispatch, so no frame pays for it), then the forward again while the plan captures. The host may record
// the plan once into a command buffer of its own and submit that buffer every frame (a pre-recorded frame: the
// per-frame host cost is the vkQueueSubmit), as long as the bound buffers stay the same and the buffer is not
// pending when submitted again; or record it into each frame's command buffer (a few microseconds), binding
// other buffers per frame. examples/vulkan_game_loop measures both against the eager forward in one run.
//
// A forward that needs a CPU round trip (a read back, VkFFT) cannot be replayed: compile_forward throws the
// plan's CaptureError naming the op, and the caller keeps running the eager forward.
#include <array>
#include <cstdint>
#include <memory>
#include <utility>

#include "backends/vulkan/interop.hpp"
#include "backends/vulkan/plan.hpp"

namespace ember::vulkan {

class CompiledForward {
 public:
  explicit CompiledForward(std::shared_ptr<vk::Plan> plan) : plan_(std::move(plan)) {}

  void bind_input(std::size_t i, VkBuffer buffer, VkDeviceSize offset) { plan_->bind_input(i, buffer, offset); }
  void bind_output(std::size_t i, VkBuffer buffer, VkDeviceSize offset) { plan_->bind_output(i, buffer, offset); }
  // Appends the replay (input copies, the captured dispatches, output copies, with their barriers) to cb.
  void record(VkCommandBuffer cb) const { plan_->record(cb); }
  // Records the replay on Ember's stream and submits it; the timeline value that signals its completion.
  uint64_t submit() { return plan_->submit(); }

  std::size_t dispatches() const { return plan_->dispatches(); }
  const vk::Plan& plan() const { return *plan_; }

 private:
  std::shared_ptr<vk::Plan> plan_;  // kept alive by the caller until every command buffer holding it executed
};

// forward: Tensor<Vulkan, D, K> -> Tensor<Vulkan, DO, KO> (any rank and kind out). Builds at load time: it waits
// for the device (refused in host-record mode, like ember_vulkan_plan_create).
template <std::size_t D, class K = Float, class F>
CompiledForward compile_forward(const VulkanDevice& dev, std::array<int64_t, D> input_shape, F&& forward) {
  const auto ctx = dev.get();
  vk::Plan::refuse_in_record_mode(*ctx);
  (void)forward(Tensor<Vulkan, D, K>::zeros(input_shape, dev));  // the warm-up, executed and waited for
  synchronize(dev);
  auto plan = std::make_shared<vk::Plan>(ctx);
  plan->begin();
  try {
    Shape s;
    s.dims.assign(input_shape.begin(), input_shape.end());
    using T = Vulkan::Elem<K>;
    vk::VulkanTensor<T> x{ctx, nullptr, s};
    x.alloc = plan->add_input(x.bytes());
    const auto y = forward(Tensor<Vulkan, D, K>(std::move(x)));
    const BufferView out = buffer_of(y);
    plan->end({{y.primitive().alloc, out.size}});
  } catch (...) {
    plan->abort();
    throw;
  }
  return CompiledForward(std::move(plan));
}

}  // namespace ember::vulkan
