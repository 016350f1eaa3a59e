// Issue 17 part 8 beneath the C ABI: a simulated VK_ERROR_DEVICE_LOST (device_lost.hpp) at a submit and at a fence
// wait, seen as DeviceLostError; afterwards every op, read, submit and wait fails at once without calling into
// Vulkan's submit / wait entry points again; tearing the context down stays valid (validation on). And the queue
// choice of Ember's own device (queue_choice.hpp) on device shapes lavapipe does not have (an NVIDIA-like device
// with a compute-only family), plus EMBER_VULKAN_QUEUE.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/vulkan/commands.hpp"
#include "backends/vulkan/context.hpp"
#include "backends/vulkan/interop.hpp"
#include "backends/vulkan/queue_choice.hpp"
#include "backends/vulkan/vulkan_backend.hpp"
#include "engine/ember.hpp"

namespace ember {
namespace {

using T2 = Tensor<Vulkan, 2>;

vk::ContextOptions validated() {
  vk::ContextOptions o;
  o.validation = true;
  o.on_validation_message = [](const std::string& m) { ADD_FAILURE() << "Vulkan validation " << m; };
  return o;
}

// Runs f, which must throw DeviceLostError whose message contains `needle`.
template <class F>
void expect_lost(F&& f, const std::string& needle, const char* what) {
  try {
    f();
    ADD_FAILURE() << what << ": no DeviceLostError";
  } catch (const DeviceLostError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << what << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what() << " is not a DeviceLostError";
  }
}

// Everything a caller can do with a device after the loss: each fails with DeviceLostError at once, and none of
// them reaches vkQueueSubmit or a wait (calls_after_simulated_loss stays 0; the stream's counters stay put).
void expect_fail_fast(const VulkanDevice& dev, const T2& x) {
  const auto ctx = dev.get();
  const vk::StreamStats before = ctx->stream().stats();
  const std::string again = "the device was lost (VK_ERROR_DEVICE_LOST from ";
  expect_lost([&] { (void)x.add(x); }, again, "an op");
  expect_lost([&] { (void)T2::zeros({2, 2}, dev); }, again, "a new tensor");
  expect_lost([&] { (void)T2::from_values(std::vector<float>{1, 2}, {1, 2}, dev); }, again, "an upload");
  expect_lost([&] { (void)x.into_data(); }, again, "a read");
  expect_lost([&] { (void)vulkan::submit(dev); }, again, "a submit");
  expect_lost([&] { vulkan::host_wait(dev, ctx->stream().last_submitted()); }, again, "a host wait");
  expect_lost([&] { vulkan::synchronize(dev); }, again, "synchronize");
  EXPECT_TRUE(ctx->lost());
  EXPECT_EQ(ctx->calls_after_simulated_loss(), 0u) << "Ember called a submit / wait entry point after the loss";
  EXPECT_EQ(ctx->stream().stats().submits, before.submits);
  EXPECT_EQ(ctx->stream().stats().waits, before.waits);
}

TEST(VulkanDeviceLost, LossAtASubmitIsReportedAndEverythingAfterFailsFast) {
  const auto dev = vulkan::create(validated());
  const auto x = T2::from_values(std::vector<float>{1, 2, 3, 4}, {2, 2}, dev);
  EXPECT_EQ(x.mul_scalar(2.0).into_data().to_vec<float>(), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_FALSE(dev.get()->lost());
  dev.get()->simulate_device_lost(0);
  const auto y = x.mul_scalar(3.0);  // recorded only: nothing is submitted yet
  expect_lost([&] { (void)y.into_data(); }, "vkQueueSubmit failed: VK_ERROR_DEVICE_LOST", "the read that submits");
  expect_fail_fast(dev, x);
}  // the context goes with its tensors: no wait on the lost device, and validation stays silent

TEST(VulkanDeviceLost, LossAtAFenceWaitIsReportedToo) {
  const auto dev = vulkan::create(validated());
  const auto x = T2::from_values(std::vector<float>{1, 2, 3, 4}, {2, 2}, dev);
  dev.get()->simulate_device_lost(1);  // the submit of the read goes through; its fence wait reports the loss
  const auto submits = dev.get()->stream().stats().submits;
  expect_lost([&] { (void)x.exp().into_data(); }, "vkWaitForFences failed: VK_ERROR_DEVICE_LOST", "the read");
  EXPECT_EQ(dev.get()->stream().stats().submits, submits + 1);
  expect_fail_fast(dev, x);
}  // the batch the GPU still runs (a simulated loss) is drained before its objects go

TEST(VulkanDeviceLost, EnvironmentArmsNewContexts) {
  ::setenv("EMBER_VULKAN_INJECT_DEVICE_LOST", "1", 1);
  const auto dev = vulkan::create(validated());
  ::setenv("EMBER_VULKAN_INJECT_DEVICE_LOST", "soon", 1);
  try {
    (void)vulkan::create(validated());
    ADD_FAILURE() << "EMBER_VULKAN_INJECT_DEVICE_LOST=soon was accepted";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("EMBER_VULKAN_INJECT_DEVICE_LOST=soon"), std::string::npos) << e.what();
  }
  ::unsetenv("EMBER_VULKAN_INJECT_DEVICE_LOST");
  const auto x = T2::from_values(std::vector<float>{1, 2, 3, 4}, {2, 2}, dev);
  expect_lost([&] { (void)x.neg().into_data(); }, "vkWaitForFences failed: VK_ERROR_DEVICE_LOST", "the first read");
  // A context created without the variable is not armed.
  const auto healthy = vulkan::create(validated());
  const auto z = T2::from_values(std::vector<float>{1, 2}, {1, 2}, healthy);
  EXPECT_EQ(z.neg().into_data().to_vec<float>(), (std::vector<float>{-1, -2}));
  EXPECT_EQ(healthy.get()->calls_after_simulated_loss(), 0u);
}

// ---------------------------------------------------------------- queue choice
VkQueueFamilyProperties family(VkQueueFlags flags, uint32_t count) {
  VkQueueFamilyProperties f{};
  f.queueFlags = flags;
  f.queueCount = count;
  return f;
}
constexpr VkQueueFlags kGCT = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT;
constexpr VkQueueFlags kCT = VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT;

template <class F>
void expect_refused(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one saying \"" << needle << "\"";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(VulkanQueueChoice, AsyncComputeFamilyWhenTheDeviceHasOne) {
  using vk::QueuePreference;
  // An NVIDIA-like device: universal x16, transfer-only x2, compute-only x8.
  const std::vector<VkQueueFamilyProperties> nv{family(kGCT, 16), family(VK_QUEUE_TRANSFER_BIT, 2), family(kCT, 8)};
  auto pick = [&](QueuePreference p, int fam, uint32_t index) {
    const vk::QueueChoice q = vk::choose_queue(nv, p, fam, index);
    return std::pair{q.family, q.index};
  };
  EXPECT_EQ(pick(QueuePreference::AsyncCompute, -1, 0), std::pair(2u, 0u));
  EXPECT_EQ(pick(QueuePreference::RequireAsyncCompute, -1, 5), std::pair(2u, 5u));
  EXPECT_EQ(pick(QueuePreference::Universal, -1, 0), std::pair(0u, 0u));
  EXPECT_EQ(pick(QueuePreference::AsyncCompute, 0, 3), std::pair(0u, 3u));  // an explicit family wins
  expect_refused([&] { pick(QueuePreference::AsyncCompute, 1, 0); }, "family 1 does not exist or cannot run compute");
  expect_refused([&] { pick(QueuePreference::AsyncCompute, 7, 0); }, "family 7 does not exist");
  expect_refused([&] { pick(QueuePreference::AsyncCompute, -1, 8); }, "queue index 8 of family 2 does not exist");

  // A lavapipe-like device: one universal family of one queue.
  const std::vector<VkQueueFamilyProperties> lvp{family(kGCT, 1)};
  EXPECT_EQ(vk::choose_queue(lvp, QueuePreference::AsyncCompute, -1, 0).family, 0u);
  EXPECT_EQ(vk::choose_queue(lvp, QueuePreference::Universal, -1, 0).family, 0u);
  expect_refused([&] { vk::choose_queue(lvp, QueuePreference::RequireAsyncCompute, -1, 0); },
                 "no compute-only (async compute) queue family (families: 0: graphics|compute|transfer x1)");
  // A compute-only device (no graphics at all): universal falls back to its compute family.
  const std::vector<VkQueueFamilyProperties> headless{family(VK_QUEUE_TRANSFER_BIT, 1), family(kCT, 4)};
  EXPECT_EQ(vk::choose_queue(headless, QueuePreference::Universal, -1, 0).family, 1u);
  const std::vector<VkQueueFamilyProperties> none{family(VK_QUEUE_TRANSFER_BIT, 1)};
  expect_refused([&] { vk::choose_queue(none, QueuePreference::AsyncCompute, -1, 0); }, "no compute queue");
}

TEST(VulkanQueueChoice, EnvironmentOverridesTheOptions) {
  using vk::QueuePreference;
  struct Case {
    const char* value;
    QueuePreference preference;
    int family;
    uint32_t index;
  };
  const Case cases[] = {{"async", QueuePreference::AsyncCompute, -1, 0},
                        {"universal", QueuePreference::Universal, -1, 0},
                        {"async-only", QueuePreference::RequireAsyncCompute, -1, 0},
                        {"2", QueuePreference::Universal, 2, 0},
                        {"1:3", QueuePreference::Universal, 1, 3}};
  for (const Case& c : cases) {
    ::setenv("EMBER_VULKAN_QUEUE", c.value, 1);
    QueuePreference p = QueuePreference::Universal;
    int fam = 5;
    uint32_t index = 0;
    vk::apply_queue_env(p, fam, index);
    EXPECT_EQ(p, c.preference) << c.value;
    EXPECT_EQ(fam, c.family) << c.value;
    EXPECT_EQ(index, c.index) << c.value;
  }
  for (const char* bad : {"fast", "1:", ":2", "-1", "2:x"}) {
    ::setenv("EMBER_VULKAN_QUEUE", bad, 1);
    QueuePreference p = QueuePreference::AsyncCompute;
    int fam = -1;
    uint32_t index = 0;
    expect_refused([&] { vk::apply_queue_env(p, fam, index); }, std::string("EMBER_VULKAN_QUEUE=") + bad);
  }
  ::unsetenv("EMBER_VULKAN_QUEUE");
}

TEST(VulkanQueueChoice, OwnDeviceRunsOnTheChosenQueue) {
  const auto probe = vulkan::create(validated());
  const auto c = probe.get();
  uint32_t n = 0;
  c->fn().GetPhysicalDeviceQueueFamilyProperties(c->physical_device(), &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  c->fn().GetPhysicalDeviceQueueFamilyProperties(c->physical_device(), &n, families.data());
  const vk::QueueChoice want = vk::choose_queue(families, vk::QueuePreference::AsyncCompute, -1, 0);
  EXPECT_EQ(c->queue_family(), want.family);
  EXPECT_EQ(c->queue_index(), 0u);

  // The last queue of the chosen family (queue 0 on lavapipe, which has one), used for real work.
  vk::ContextOptions o = validated();
  o.queue_family = static_cast<int>(want.family);
  o.queue_index = families[want.family].queueCount - 1;
  const auto dev = vulkan::create(o);
  EXPECT_EQ(dev.get()->queue_index(), o.queue_index);
  const auto x = T2::from_values(std::vector<float>{1, -2}, {1, 2}, dev);
  EXPECT_EQ(x.abs().into_data().to_vec<float>(), (std::vector<float>{1, 2}));

  // A queue past the family's count, and async-only on a device without a compute-only family, are refused.
  o.queue_index = families[want.family].queueCount;
  expect_refused([&] { (void)vulkan::create(o); }, "does not exist");
  bool has_async = false;
  for (const auto& f : families)
    has_async |= (f.queueFlags & VK_QUEUE_COMPUTE_BIT) && !(f.queueFlags & VK_QUEUE_GRAPHICS_BIT);
  if (!has_async) {
    vk::ContextOptions a = validated();
    a.queue_preference = vk::QueuePreference::RequireAsyncCompute;
    expect_refused([&] { (void)vulkan::create(a); }, "no compute-only (async compute) queue family");
  }
}

}  // namespace
}  // namespace ember
