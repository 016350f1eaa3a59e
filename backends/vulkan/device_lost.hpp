#pragma once
// Simulated device loss, to test how Ember and its host recover from VK_ERROR_DEVICE_LOST without a GPU hang
// (what ID3D12Device5::RemoveDevice is to Direct3D 12). Armed by EMBER_VULKAN_INJECT_DEVICE_LOST=n when a context
// is created, or later by Context::simulate_device_lost(n) (ember.h: ember_vulkan_simulate_device_lost).
//
// It works through the context's function table (vk_functions.hpp), so Ember's real code paths see the loss: the
// n+1-th vkQueueSubmit or blocking fence / semaphore wait after arming returns VK_ERROR_DEVICE_LOST instead of
// running, and so does every submit, wait, fence or semaphore query after it, as on a lost device. Calls made
// after the loss are counted (calls_after_loss): Ember's fail-fast rule says there are none.
//
// One difference from a real loss: the GPU still executes what was submitted before. drain() waits for it when
// the context is torn down, so destroying Ember's objects stays valid for the validation layer (a real lost device
// needs no wait: its work is gone).
#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>

#include "backends/vulkan/vk_functions.hpp"

namespace ember::vk {

class Context;

class LossInjection {
 public:
  // Replaces the submit / wait / query entry points of `fn` (the context's table) with counting wrappers. At most
  // kMaxArmed contexts at once (VulkanError beyond). `fn` must outlive the returned object.
  static std::unique_ptr<LossInjection> install(Context& ctx, Functions& fn, uint32_t after);
  ~LossInjection();  // puts the real entry points back and frees the wrapper slot
  LossInjection(const LossInjection&) = delete;
  LossInjection& operator=(const LossInjection&) = delete;

  // Re-arms: the loss happens after `after` more submits / waits (no effect once it happened).
  void rearm(uint32_t after);
  bool fired() const;
  // Calls into the wrapped entry points after the loss was reported (each returned VK_ERROR_DEVICE_LOST).
  uint64_t calls_after_loss() const;
  // Waits (through the real entry points, under the host's queue lock) for the work submitted before the loss.
  void drain();

  static constexpr int kMaxArmed = 8;

 private:
  LossInjection(Functions& fn, int slot) : fn_(fn), slot_(slot) {}
  Functions& fn_;
  int slot_;
};

// EMBER_VULKAN_INJECT_DEVICE_LOST: the `after` count when set to a number >= 0; -1 when unset or empty; throws
// ArgumentError for anything else.
int64_t injected_loss_from_env();

}  // namespace ember::vk
